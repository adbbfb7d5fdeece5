// SPDX-License-Identifier: Apache-2.0
// File ▸ Sign in… and Sign out: the reader's sign-in to the hospital's identity provider, for the stores that ask
// for one (signin.h), and the status bar's "Signed in as …".

#include "shell/mainwindow.h"
#include "shell/workstation.h"

#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/signin/signin.h"

#include <QDesktopServices>
#include <QLabel>
#include <QPointer>
#include <QProcess>
#include <QStatusBar>

#include <functional>
#include <memory>

namespace spectrum {

namespace {

/// The sign-ins of the configured stores that ask for one.
QList<SignIn *> configuredSignIns(Workstation *workstation)
{
    QList<SignIn *> out;
    StoreRegistry *registry = workstation->registry();
    if (!registry)
        return out;
    for (const StoreConfig &store : registry->config().stores()) {
        SignIn *s = SignIn::forStore(store, registry->config());
        if (s && !out.contains(s))
            out << s;
    }
    return out;
}

/// The desktop's browser, or $SPECTRUM_BROWSER (a program given the URL).
void openBrowser(const QUrl &url)
{
    const QString browser = qEnvironmentVariable("SPECTRUM_BROWSER");
    if (!browser.isEmpty())
        QProcess::startDetached(browser, {url.toString(QUrl::FullyEncoded)});
    else
        QDesktopServices::openUrl(url);
}

} // namespace

QString MainWindow::signedInText() const
{
    QStringList who;
    for (const SignIn *s : SignIn::all()) {
        if (s->isSignedIn() && !who.contains(s->userName()))
            who << s->userName();
    }
    return who.isEmpty() ? QString() : tr("Signed in as %1").arg(who.join(QStringLiteral(", ")));
}

void MainWindow::showSignIn()
{
    for (SignIn *s : configuredSignIns(m_workstation))
        connect(s, &SignIn::changed, this, &MainWindow::showSignIn, Qt::UniqueConnection);
    m_signInLabel->setText(signedInText());
    m_signInLabel->setVisible(!m_signInLabel->text().isEmpty());
}

void MainWindow::signIn()
{
    const QList<SignIn *> signIns = configuredSignIns(m_workstation);
    if (signIns.isEmpty()) {
        statusBar()->showMessage(tr("No store signs in: give a DICOMweb or S3 store \"auth\": \"oidc\" with the hospital's identity provider (File ▸ Stores)"), 8000);
        return;
    }
    QList<QPointer<SignIn>> waiting;
    for (SignIn *s : signIns) {
        connect(s, &SignIn::changed, this, &MainWindow::showSignIn, Qt::UniqueConnection);
        if (!s->isSignedIn())
            waiting << s;
    }
    if (waiting.isEmpty()) {
        statusBar()->showMessage(signedInText(), 5000);
        return;
    }
    // One provider after the other: one browser page at a time. The step holds itself only through the sign-in it
    // waits for (a step owning itself would never be freed).
    auto next = std::make_shared<std::function<void()>>();
    *next = [this, waiting, weakNext = std::weak_ptr<std::function<void()>>(next)]() mutable {
        const auto self = weakNext.lock();
        if (!self)
            return;
        while (!waiting.isEmpty() && (!waiting.first() || waiting.first()->isSignedIn()))
            waiting.removeFirst();
        if (waiting.isEmpty())
            return;
        SignIn *s = waiting.takeFirst();
        statusBar()->showMessage(tr("Sign in in your browser (%1)…").arg(s->provider().issuer.host()));
        whenDone(s->signIn(openBrowser), this, [this, s, self](const Result<Done> &r) {
            statusBar()->showMessage(r.isOk() ? tr("Signed in as %1").arg(s->userName()) : tr("Not signed in: %1").arg(r.error().message()), 10000);
            showSignIn();
            (*self)();
        });
    };
    (*next)();
}

void MainWindow::signOut()
{
    for (SignIn *s : configuredSignIns(m_workstation)) {
        if (!s->isSignedIn())
            continue;
        whenDone(s->signOut(), this, [this](const Result<Done> &r) {
            statusBar()->showMessage(r.isOk() ? tr("Signed out") : r.error().message(), 10000);
            showSignIn();
        });
    }
}

} // namespace spectrum

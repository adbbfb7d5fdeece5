// SPDX-License-Identifier: Apache-2.0
// File ▸ Sign in… and Sign out: the reader's sign-in to the hospital's identity provider, for the stores that ask
// for one (signin.h), and the status bar's "Signed in as …". And the hospital's sign-in policy (signinpolicy.h): the
// reading room's lock after some minutes without use (idlelock.h).

#include "browser/studybrowser.h"
#include "findings/findingsmodel.h"
#include "stores/transferspanel.h"
#include "shell/idlelock.h"
#include "shell/mainwindow.h"
#include "shell/workstation.h"
#include "viewer/studyviewer.h"

#include "spectrum/core/logging.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/signin/signin.h"

#include <QApplication>
#include <QDesktopServices>
#include <QDockWidget>
#include <QLabel>
#include <QPointer>
#include <QProcess>
#include <QPushButton>
#include <QTabWidget>
#include <QStatusBar>

#include <algorithm>
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
    if (m_idleLock && !m_idleLock->isLocked())
        rememberReaders();  // whoever is signed in while the window is open is a reader of what it shows
    updateLock();
}

void MainWindow::rememberReaders()
{
    for (const SignIn *s : configuredSignIns(m_workstation)) {
        if (s->holdsTokens() && !s->subject().isEmpty() && !m_lockedReaders.contains(s->subject())) {
            m_lockedReaders << s->subject();
            m_lockedReaderNames << s->userName();
        }
    }
}

void MainWindow::applySignInPolicy()
{
    const StoreRegistry *registry = m_workstation->registry();
    const SignInPolicy policy = registry ? registry->config().signIn : SignInPolicy();
    if (policy.isSet())
        qCInfo(lcApp).noquote() << "sign-in policy:" << policy.summary() << (policy.fromSystem ? "(the hospital's)" : "(this user's)");
    if (policy.idleMinutes <= 0) {
        if (m_idleLock)
            m_idleLock->setIdleTime(0);
        return;
    }
    if (!m_idleLock) {
        m_idleLock = new IdleLock(this);
        connect(m_idleLock, &IdleLock::idle, this, &MainWindow::lockForIdle);
        connect(m_idleLock->primaryButton(), &QPushButton::clicked, this, [this] {
            const QList<SignIn *> signIns = configuredSignIns(m_workstation);
            if (signIns.isEmpty()) {
                m_idleLock->unlock();  // no store signs in: the cover only kept the images from passers-by
                return;
            }
            if (std::any_of(signIns.cbegin(), signIns.cend(), [](const SignIn *s) { return s->holdsTokens(); }))
                endSignIns();  // another reader at the cover, who is not going on: the first may come back
            else
                signIn();
        });
        connect(m_idleLock->secondaryButton(), &QPushButton::clicked, this, &MainWindow::closeStudiesAndUnlock);
    }
    m_idleLock->setIdleTime(qMax(1000, int(policy.idleMinutes * 60000)));
    showSignIn();
}

void MainWindow::endSignIns()
{
    ++m_signInRound;  // a sign-in sequence on its way stops at the provider it is at
    for (SignIn *s : configuredSignIns(m_workstation)) {
        if (!s->holdsTokens())
            continue;
        ++m_lockSignOuts;
        whenDone(s->signOut(), this, [this](const Result<Done> &r) {
            if (!r.isOk())
                qCWarning(lcApp).noquote() << "sign-out at the lock:" << r.error().message();
            --m_lockSignOuts;
            showSignIn();
        });
    }
    updateLock();
}

void MainWindow::lockForIdle()
{
    if (m_idleLock->isLocked()) {
        // Someone signed in at the cover and went away: signed out too; the studies stay the first reader's.
        endSignIns();
        return;
    }
    // The readers of what is open: whoever was signed in since the window was last uncovered, and whoever is now.
    rememberReaders();
    qCInfo(lcApp).noquote() << "no input for" << m_idleLock->idleTime() / 1000 << "s (or signed out): the window covered, signing out"
                            << (m_lockedReaderNames.isEmpty() ? QStringLiteral("no one") : m_lockedReaderNames.join(QStringLiteral(", ")))
                            << "(the hospital's sign-in policy)";
    m_idleLock->lock();
    endSignIns();
}

void MainWindow::updateLock()
{
    if (!m_idleLock || !m_idleLock->isLocked())
        return;
    const int seconds = m_idleLock->idleTime() / 1000;
    const QString after = seconds % 60 == 0 ? (seconds == 60 ? tr("1 minute") : tr("%1 minutes").arg(seconds / 60))
                                            : (seconds == 1 ? tr("1 second") : tr("%1 seconds").arg(seconds));
    const QString title = tr("Signed out after %1 without use").arg(after);
    QPushButton *primary = m_idleLock->primaryButton();
    QPushButton *secondary = m_idleLock->secondaryButton();
    secondary->hide();
    primary->setEnabled(true);
    const int studies = m_tabs->count() - 1;
    const QList<SignIn *> signIns = configuredSignIns(m_workstation);
    if (signIns.isEmpty()) {
        m_idleLock->setText(tr("Hidden after %1 without use").arg(after),
                            tr("The images are hidden from passers-by (the hospital's policy for this workstation); no store here signs readers in."));
        primary->setText(tr("Show"));
        return;
    }
    if (m_lockSignOuts > 0) {
        // Nothing is decided on sign-ins that are still ending.
        m_idleLock->setText(title, tr("The studies are hidden while the sign-in ends at the identity provider."));
        primary->setText(tr("Signing out…"));
        primary->setEnabled(false);
        return;
    }
    QStringList now, nowNames;
    for (const SignIn *s : signIns) {
        if (s->isSignedIn() && !now.contains(s->subject())) {
            now << s->subject();
            nowNames << s->userName();
        }
    }
    const bool one = studies == 1;
    if (now.isEmpty()) {
        QString detail;
        if (studies == 0)
            detail = tr("Sign in to go on.");
        else if (m_lockedReaderNames.isEmpty())
            detail = one ? tr("1 study open here, opened without a sign-in, is hidden: whoever signs in closes it to go on.")
                         : tr("%1 studies open here, opened without a sign-in, are hidden: whoever signs in closes them to go on.").arg(studies);
        else
            detail = one ? tr("1 study open here is hidden. %1 signs in again to go on with it as it was.").arg(m_lockedReaderNames.join(tr(" or ")))
                         : tr("%1 studies open here are hidden. %2 signs in again to go on with them as they were.")
                               .arg(QString::number(studies), m_lockedReaderNames.join(tr(" or ")));
        m_idleLock->setText(title, detail);
        primary->setText(tr("Sign in…"));
        return;
    }
    const bool sameReader = !m_lockedReaders.isEmpty()
                            && std::all_of(now.cbegin(), now.cend(), [this](const QString &subject) { return m_lockedReaders.contains(subject); });
    if (sameReader) {
        m_idleLock->unlock(true);
        statusBar()->showMessage(tr("Signed in as %1").arg(nowNames.join(QStringLiteral(", "))), 10000);
        return;
    }
    if (studies == 0) {
        forgetPreviousReader();
        m_idleLock->unlock(false);
        statusBar()->showMessage(tr("Signed in as %1").arg(nowNames.join(QStringLiteral(", "))), 10000);
        return;
    }
    // Another reader: what was open is the first one's — hidden until closed, and closed only when asked.
    int unsaved = 0;
    for (int i = 1; i < m_tabs->count(); ++i) {
        if (const auto *viewer = qobject_cast<StudyViewer *>(m_tabs->widget(i)))
            unsaved += viewer->findings()->unsavedCount();
    }
    const QString readers = nowNames.join(QStringLiteral(", "));
    QString detail;
    if (m_lockedReaderNames.isEmpty())
        detail = one ? tr("Signed in as %1. The study open here, opened without a sign-in, stays hidden: close it to go on.").arg(readers)
                     : tr("Signed in as %1. The %2 studies open here, opened without a sign-in, stay hidden: close them to go on.").arg(readers, QString::number(studies));
    else
        detail = one ? tr("Signed in as %1. The study %2 had open stays hidden from another reader: close it to go on.").arg(readers, m_lockedReaderNames.join(tr(" and ")))
                     : tr("Signed in as %1. The %2 studies %3 had open stay hidden from another reader: close them to go on.")
                           .arg(readers, QString::number(studies), m_lockedReaderNames.join(tr(" and ")));
    if (unsaved > 0)
        detail += QLatin1Char(' ') + (unsaved == 1 ? tr("Their unsaved finding will be lost.") : tr("Their %1 unsaved findings will be lost.").arg(unsaved));
    m_idleLock->setText(title, detail);
    primary->setText(tr("Sign out"));
    const QString close = one ? tr("Close it") : tr("Close them");
    secondary->setText(unsaved == 0 ? close : unsaved == 1 ? tr("%1, losing 1 unsaved finding").arg(close) : tr("%1, losing %2 unsaved findings").arg(close).arg(unsaved));
    secondary->show();
}

void MainWindow::forgetPreviousReader()
{
    // What the reader before had searched for and left in the lists is theirs too.
    m_browser->patientNameField()->clear();
    m_browser->patientIdField()->clear();
    m_browser->accessionField()->clear();
    m_browser->model()->clearStores();
    m_browser->refreshLocal();
    m_transfers->clearFinished();
    m_lockedReaders.clear();
    m_lockedReaderNames.clear();
    rememberReaders();  // the new reader's, from now on
}

void MainWindow::closeStudiesAndUnlock()
{
    if (!m_idleLock || !m_idleLock->isLocked())
        return;
    qCInfo(lcApp).noquote() << "another reader at the lock closed the" << m_tabs->count() - 1 << "studies"
                            << (m_lockedReaderNames.isEmpty() ? QStringLiteral("opened without a sign-in") : m_lockedReaderNames.join(QStringLiteral(", ")) + QStringLiteral(" had open"));
    while (m_tabs->count() > 1)
        closeTab(m_tabs->count() - 1);
    forgetPreviousReader();
    m_idleLock->unlock(false);
    // The first reader's other windows (a dialog, an import's report) are theirs as well.
    for (QWidget *w : QApplication::topLevelWidgets()) {
        if (w != this && w->isVisible() && !m_idleLock->isCover(w) && !qobject_cast<QDockWidget *>(w))
            w->close();
    }
    statusBar()->showMessage(signedInText(), 10000);
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
    *next = [this, waiting, round = m_signInRound, weakNext = std::weak_ptr<std::function<void()>>(next)]() mutable {
        const auto self = weakNext.lock();
        if (!self || round != m_signInRound)
            return;  // signed out (or locked) since: the providers still waiting are not asked
        while (!waiting.isEmpty() && (!waiting.first() || waiting.first()->isSignedIn()))
            waiting.removeFirst();
        if (waiting.isEmpty())
            return;
        SignIn *s = waiting.takeFirst();
        statusBar()->showMessage(tr("Sign in in your browser (%1)…").arg(s->provider().issuer.host()));
        whenDone(s->signIn(openBrowser), this, [this, s, self](const Result<Done> &r) {
            statusBar()->showMessage(r.isOk() ? tr("Signed in as %1").arg(s->userName()) : tr("Not signed in: %1").arg(r.error().message()), 10000);
            if (!r.isOk() && m_idleLock && m_idleLock->isLocked())  // the status bar is under the cover
                m_idleLock->setText(tr("Not signed in"), r.error().message());
            showSignIn();
            (*self)();
        });
    };
    (*next)();
}

void MainWindow::signOut()
{
    if (m_idleLock && m_idleLock->idleTime() > 0) {
        lockForIdle();  // a shared workstation: signing out leaves nothing of the reader's in view
        return;
    }
    ++m_signInRound;
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

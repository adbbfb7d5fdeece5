// SPDX-License-Identifier: Apache-2.0
// Signing in to the hospital's identity provider for the stores that ask for it ("auth": "oidc"): login opens the
// system browser (or $SPECTRUM_BROWSER) on the provider's page and waits for it to come back to this machine;
// logout revokes the sign-in. The sign-in is kept for the other commands and the workstation.

#include "archivesupport.h"
#include "commands.h"
#include "output.h"

#include "spectrum/stores/signin/signin.h"

#include <QCommandLineParser>
#include <QProcess>

#include <cstdio>

namespace spectrum::cli {

namespace {

/// The sign-in of --store NAME (a store with "auth": "oidc").
Result<SignIn *> signInOf(const QCommandLineParser &p)
{
    Result<StoreConfigFile> config = loadConfig(p);
    if (!config.isOk())
        return config.error();
    const QString name = p.value(QStringLiteral("store"));
    if (name.isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("--store NAME: the store whose identity provider to sign in to"));
    const StoreConfig *store = config.value().find(name);
    if (!store)
        return Error(ErrorCode::NotFound, QStringLiteral("no store named '%1' in %2").arg(name, config.value().path()));
    SignIn *signIn = SignIn::forStore(*store, config.value());
    if (!signIn)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("store '%1' does not sign in (its auth is not oidc)").arg(name));
    return signIn;
}

/// The system browser, or $SPECTRUM_BROWSER (a program given the URL); the URL said too, for a machine without one.
void openBrowser(const QUrl &url)
{
    std::fprintf(stderr, "Sign in in your browser; if it does not open, open this address:\n  %s\n", url.toString(QUrl::FullyEncoded).toUtf8().constData());
    const QString browser = qEnvironmentVariable("SPECTRUM_BROWSER");
    if (!QProcess::startDetached(browser.isEmpty() ? QStringLiteral("xdg-open") : browser, {url.toString(QUrl::FullyEncoded)}))
        std::fprintf(stderr, "(no browser could be started)\n");
}

int cmdLogin(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Signs in to the identity provider of a store (\"auth\": \"oidc\") in the system browser."));
    p.addHelpOption();
    addConfigOption(p);
    p.addOption({QStringLiteral("store"), QStringLiteral("The store whose identity provider to sign in to."), QStringLiteral("NAME")});
    processArguments(p, args);
    Result<SignIn *> signIn = signInOf(p);
    if (!signIn.isOk())
        return fail(signIn.error().toString(), signIn.error().code() == ErrorCode::InvalidArgument ? 2 : 1);
    // A shared reading-room workstation keeps no sign-in beyond its program: one made here would end with this
    // command, signed in for nothing.
    if (Result<StoreConfigFile> config = loadConfig(p); config.isOk() && !config.value().signIn.keepBetweenPrograms)
        return fail(QStringLiteral("the hospital's sign-in policy (\"signIn\": {\"keep\": \"program\"}%1) keeps no sign-in beyond the program that "
                                   "made it: a login here would end with this command. Sign in in the workstation (File > Sign in…)")
                        .arg(config.value().signIn.fromSystem ? QStringLiteral(" in the hospital's configuration") : QStringLiteral(" in ") + config.value().path()));
    const Error e = runSync(signIn.value()->signIn(openBrowser)).error();
    if (e.isError())
        return fail(e.toString());
    out(QStringLiteral("signed in as %1 (%2) at %3, until %4")
            .arg(signIn.value()->userName(), signIn.value()->subject(), signIn.value()->provider().issuer.toString(),
                 signIn.value()->accessExpires().toLocalTime().toString(Qt::ISODate)));
    return 0;
}

int cmdLogout(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Signs out of a store's identity provider: the sign-in is revoked and forgotten here."));
    p.addHelpOption();
    addConfigOption(p);
    p.addOption({QStringLiteral("store"), QStringLiteral("The store whose sign-in to end."), QStringLiteral("NAME")});
    processArguments(p, args);
    Result<SignIn *> signIn = signInOf(p);
    if (!signIn.isOk())
        return fail(signIn.error().toString(), signIn.error().code() == ErrorCode::InvalidArgument ? 2 : 1);
    if (const Error e = runSync(signIn.value()->ready()).error(); e.isError())
        return fail(QStringLiteral("cannot sign out: %1").arg(e.message()));
    if (!signIn.value()->holdsTokens()) {
        out(QStringLiteral("not signed in to %1").arg(signIn.value()->provider().issuer.toString()));
        return 0;
    }
    const Error e = runSync(signIn.value()->signOut()).error();
    if (e.isError())
        return fail(e.toString());
    out(QStringLiteral("signed out of %1").arg(signIn.value()->provider().issuer.toString()));
    return 0;
}

} // namespace

QList<Command> signInCommands()
{
    return {
        {"login", "--store NAME", "sign in to a store's identity provider (OpenID Connect) in the browser", cmdLogin, false},
        {"logout", "--store NAME", "sign out: the identity provider revokes the sign-in", cmdLogout, false},
    };
}

} // namespace spectrum::cli

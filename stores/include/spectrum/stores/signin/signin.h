// SPDX-License-Identifier: Apache-2.0
#pragma once
// The reader's sign-in to the hospital's identity provider (OpenID Connect), for the stores that ask for one
// ("auth": "oidc"): one per provider and client in the process, whichever stores share it. It signs in through the
// system browser (transfer's OidcClient: PKCE, loopback, state, nonce), keeps the access token renewed before it
// expires, gives it to each request (any thread), and signs out (the provider revokes it). The tokens are kept
// sealed beside the store configuration (sign-in.json: the same key as the stores' secrets, owner-only), so the
// next program — the workstation, a command — goes on without signing in again; two programs never renew at once
// (a lock), as a provider that rotates refresh tokens would take the second for a thief. Who signed in becomes the
// reader of the audit trail, and the one findings name.

#include "spectrum/core/resultjob.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/transfer/oidc.h"

#include <QMutex>
#include <QObject>
#include <QTimer>
#include <QWaitCondition>

#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace spectrum {

class TokenVault;

class SignIn : public QObject
{
    Q_OBJECT
public:
    /// The sign-in `store` (auth "oidc") uses, shared in this process, made on first use (deleted as the
    /// application ends); null for a store that signs in otherwise. The tokens an earlier program kept are read at once
    /// (not refreshed: resume() does that).
    static SignIn *forStore(const StoreConfig &store, const StoreConfigFile &config);
    /// Every sign-in made so far.
    static QList<SignIn *> all();
    /// Deletes them all (at the application's end, from its post routine).
    static void deleteAll();
    ~SignIn() override;

    const OidcProvider &provider() const { return m_client.provider(); }
    /// An access token is held (it may be renewed behind the requests).
    bool isSignedIn() const;
    /// An access or a refresh token is held (a sign-out has something to revoke).
    bool holdsTokens() const;
    /// The token for a request now (any thread); empty when not signed in.
    QString accessToken() const;
    /// accessToken() for the requests to call (any thread), safe to call after this sign-in is gone (at the
    /// application's end a request may still be on a pool thread): empty then.
    std::function<QString()> accessTokenSource() const;
    /// When it expires (UTC); invalid when not said.
    QDateTime accessExpires() const;
    /// The reader as the provider names them ("Dr. Anna Smith"), and as DICOM PN for the documents they sign.
    QString userName() const;
    QString personName() const;
    QString subject() const;
    /// "sign in again (File > Sign in…, or spectrum-cli login --store NAME)" — what an error tells the reader to do.
    QString hint() const;

    /// Signs in through the browser (`openBrowser` shows the URL); the reader becomes the audit trail's user.
    ResultJob<Done> *signIn(std::function<void(const QUrl &)> openBrowser);
    /// Signs out: the provider revokes the refresh token, nothing is kept here (even when the provider cannot be
    /// reached: then said).
    ResultJob<Done> *signOut();
    /// Done once what an earlier program kept has been read (from the keyring, which may first ask to be
    /// unlocked, or the file): isSignedIn() then says whether there is a sign-in to go on with. An error when it
    /// could not be read.
    ResultJob<Done> *ready();
    /// Goes on with what an earlier program kept: renewed now when the access token is (nearly) expired. Done
    /// without a sign-in when nothing was kept; an Authentication error when it cannot be renewed (sign in again).
    ResultJob<Done> *resume();
    /// The reader's ID token, for a store that trades it for credentials of its own (S3 through a security token
    /// service), valid `minSeconds` more at least (half its life, when the provider gives it less than twice that):
    /// the sign-in renewed first when it is not. An Authentication error that says how to sign in when there is no
    /// sign-in (or the provider gave no ID token).
    ResultJob<QString> *identityToken(int minSeconds = 120);

Q_SIGNALS:
    /// Signed in, renewed, signed out, or a renewal failed (the reader must sign in again).
    void changed();

private:
    /// What accessTokenSource() holds: this sign-in while it lives, null once it is deleted.
    struct Handle
    {
        QMutex mutex;
        const SignIn *signIn = nullptr;
        bool reading = true;  ///< what was kept is being read (requests off this thread wait for it)
        QWaitCondition read;
    };
    SignIn(OidcProvider provider, StoreConfigFile config, QString storeName, QObject *parent);
    void adopt(const OidcTokens &tokens);
    /// Signs out here: nothing held, nothing kept (`then` once the vault has forgotten too).
    void forget(std::function<void()> then = {});
    void scheduleRenewal();
    void renew();
    void renewIfDue();

    /// What a step of the vault's queue gives back: tokens read, where they were kept, or what went wrong.
    struct VaultAnswer
    {
        Error error;
        std::optional<OidcTokens> tokens;
        QString where;
        std::optional<OidcTokens> ended;  ///< a kept sign-in the vault ended (a newer sign-out elsewhere): to revoke
    };
    /// Revokes at the provider a sign-in taken out of the vault (`what` names it in the log); `then` once the
    /// provider answered (or could not be reached).
    void revokeLeftover(const OidcTokens &tokens, const QString &what, std::function<void()> then = {});
    /// Runs `work` on a worker thread once the steps before it are done (the keyring may ask the reader to unlock
    /// it: never on this thread), then `then` here — unless this sign-in is gone.
    void inVault(std::function<VaultAnswer(const TokenVault &)> work, std::function<void(VaultAnswer &&)> then, bool writes = false);
    void nextVaultStep();
    /// At the end: waits for the step on its way (10 s at most), then does the writes still queued, here — a
    /// sign-out or a rotated refresh token is never lost because the program ended.
    void finishVault();
    /// What the vault holds for this provider (another program may have renewed it since): `then(tokens)`.
    void readKept(std::function<void(std::optional<OidcTokens>, const Error &)> then);
    /// Keeps the tokens held now (under the lock every program of the user takes to write, unless `locked`: the
    /// caller holds it): `then(error, where)`.
    void keep(bool locked, std::function<void(const Error &, const QString &)> then);

    OidcClient m_client;
    StoreConfigFile m_config;
    std::shared_ptr<const TokenVault> m_vault;
    struct VaultStep
    {
        std::function<VaultAnswer(const TokenVault &)> work;
        std::function<void(VaultAnswer &&)> then;
        bool writes = false;
    };
    /// The step on a worker now, as that worker sees it.
    struct VaultFlight
    {
        QMutex mutex;
        QWaitCondition done;
        bool running = false;
    };
    QList<VaultStep> m_vaultSteps;
    bool m_vaultBusy = false;
    std::shared_ptr<VaultFlight> m_flight = std::make_shared<VaultFlight>();
    QString m_storeName;
    mutable QMutex m_mutex;
    OidcTokens m_tokens;
    QTimer m_renewal;
    bool m_renewing = false;
    bool m_signingIn = false;
    quint64 m_generation = 0;           ///< a new one at each sign-in and sign-out: older renewals are dropped
    mutable bool m_renewQueued = false; ///< under m_mutex
    std::shared_ptr<Handle> m_handle;
};

} // namespace spectrum

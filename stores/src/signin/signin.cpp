// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/signin/signin.h"

#include "spectrum/core/audit/audit.h"
#include "spectrum/core/audit/auditevents.h"
#include "spectrum/core/logging.h"
#include "spectrum/core/threadpools.h"

#include "signin/tokenvault.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QThread>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QPointer>
#include <QSaveFile>

#include <openssl/crypto.h>


namespace spectrum {

namespace {

constexpr qint64 kRenewAheadSeconds = 60;

QMutex &registryMutex()
{
    static QMutex m;
    return m;
}

QHash<QString, SignIn *> &registry()
{
    static QHash<QString, SignIn *> r;
    return r;
}

auditevents::Peer providerPeer(const OidcProvider &p)
{
    return auditevents::Peer{p.issuer.toString(), p.clientId, p.issuer.host()};
}

} // namespace

SignIn *SignIn::forStore(const StoreConfig &store, const StoreConfigFile &config)
{
    OidcProvider p;
    if (const DicomWebSettings *web = store.ifKind<DicomWebSettings>(); web && web->auth == QLatin1String("oidc")) {
        p.issuer = QUrl(web->issuer);
        p.clientId = web->clientId;
        p.audience = web->audience;
        p.caFile = web->caFile;
    } else if (const S3Settings *s3 = store.ifKind<S3Settings>(); s3 && s3->auth == QLatin1String("oidc")) {
        p.issuer = QUrl(s3->issuer);
        p.clientId = s3->clientId;
        p.audience = s3->audience;
        p.caFile = s3->caFile;
    } else {
        return nullptr;
    }
    QMutexLocker lock(&registryMutex());
    SignIn *&s = registry()[p.key()];
    if (!s) {
        // Gone before the application's event loop and timers are (a child of the application would be deleted
        // after them, its renewal timer and network access manager with nothing left to stop them on).
        if (registry().size() == 1)
            qAddPostRoutine(deleteAll);
        s = new SignIn(p, config, store.name, nullptr);
    } else {
        // The configuration as it is now (a renamed store, a moved file): what the hint names and where it keeps.
        s->m_config = config;
        s->m_storeName = store.name;
        s->m_vault = std::make_shared<const TokenVault>(config);
    }
    return s;
}

void SignIn::deleteAll()
{
    QHash<QString, SignIn *> gone;
    {
        QMutexLocker lock(&registryMutex());
        gone.swap(registry());
    }
    qDeleteAll(gone);
}

QList<SignIn *> SignIn::all()
{
    QMutexLocker lock(&registryMutex());
    return registry().values();
}

SignIn::SignIn(OidcProvider provider, StoreConfigFile config, QString storeName, QObject *parent)
    : QObject(parent), m_client(std::move(provider)), m_config(std::move(config)), m_storeName(std::move(storeName)),
      m_handle(std::make_shared<Handle>())
{
    m_handle->signIn = this;
    m_vault = std::make_shared<const TokenVault>(m_config);
    m_renewal.setSingleShot(true);
    connect(&m_renewal, &QTimer::timeout, this, &SignIn::renew);
    // What an earlier program kept, read on a worker (the keyring may first ask to be unlocked).
    const quint64 generation = m_generation;
    readKept([this, generation](std::optional<OidcTokens> t, const Error &) {
        {
            QMutexLocker lock(&m_handle->mutex);
            m_handle->reading = false;  // requests waiting for it go on
            m_handle->read.wakeAll();
        }
        if (!t || generation != m_generation || isSignedIn())
            return;  // nothing kept, or signed in (or out) meanwhile
        adopt(*t);
        scheduleRenewal();
        Q_EMIT changed();
    });
}

void SignIn::revokeLeftover(const OidcTokens &tokens, const QString &what, std::function<void()> then)
{
    if (tokens.refreshToken.isEmpty() && tokens.accessToken.isEmpty()) {
        if (then)
            then();
        return;
    }
    const bool refresh = !tokens.refreshToken.isEmpty();
    ResultJob<Done> *revoke = m_client.revoke(refresh ? tokens.refreshToken : tokens.accessToken, refresh ? QStringLiteral("refresh_token") : QStringLiteral("access_token"));
    revoke->setParent(this);
    connect(revoke, &Job::finished, this, [revoke, what, then = std::move(then)] {
        if (revoke->result().isOk())
            qCInfo(lcStores).noquote() << "sign-in:" << what << "was taken out and revoked at the provider";
        else
            qCWarning(lcStores).noquote() << "sign-in:" << what << "was taken out, but the provider could not be told:" << revoke->result().error().message();
        if (then)
            then();
    });
    revoke->start(ExecutionPolicy::Async);
}

SignIn::~SignIn()
{
    finishVault();
    QMutexLocker lock(&m_handle->mutex);  // a request asking for the token now finishes asking first
    m_handle->signIn = nullptr;
    m_handle->read.wakeAll();
}

std::function<QString()> SignIn::accessTokenSource() const
{
    return [handle = m_handle]() {
        QMutexLocker lock(&handle->mutex);
        // A request on a worker thread while what was kept is still being read (a keyring waiting to be unlocked):
        // it waits for it, a while, rather than going without a token and being refused.
        if (handle->signIn && handle->reading && QThread::currentThread() != handle->signIn->thread())
            handle->read.wait(&handle->mutex, QDeadlineTimer(30000));
        return handle->signIn ? handle->signIn->accessToken() : QString();
    };
}

bool SignIn::isSignedIn() const
{
    QMutexLocker lock(&m_mutex);
    return !m_tokens.accessToken.isEmpty();
}

bool SignIn::holdsTokens() const
{
    QMutexLocker lock(&m_mutex);
    return !m_tokens.accessToken.isEmpty() || !m_tokens.refreshToken.isEmpty();
}

QString SignIn::accessToken() const
{
    QMutexLocker lock(&m_mutex);
    // Past its time by the wall clock (a machine that slept: timers do not count the sleep): renewed at once.
    if (m_tokens.accessExpires.isValid() && !m_renewQueued && QDateTime::currentDateTimeUtc() >= m_tokens.accessExpires
        && !m_tokens.refreshToken.isEmpty()) {
        m_renewQueued = true;
        QMetaObject::invokeMethod(const_cast<SignIn *>(this), &SignIn::renewIfDue, Qt::QueuedConnection);
    }
    return m_tokens.accessToken;
}

QDateTime SignIn::accessExpires() const
{
    QMutexLocker lock(&m_mutex);
    return m_tokens.accessExpires;
}

QString SignIn::userName() const
{
    QMutexLocker lock(&m_mutex);
    return m_tokens.displayName();
}

QString SignIn::personName() const
{
    QMutexLocker lock(&m_mutex);
    return m_tokens.personName();
}

QString SignIn::subject() const
{
    QMutexLocker lock(&m_mutex);
    return m_tokens.claims.value(QStringLiteral("sub")).toString();
}

QString SignIn::hint() const
{
    if (!m_config.signIn.keepBetweenPrograms)
        return QStringLiteral("sign in again to %1 in the workstation (File > Sign in…; the hospital's sign-in policy keeps none for commands)")
            .arg(provider().issuer.host());
    return QStringLiteral("sign in again to %1 (File > Sign in…, or spectrum-cli login --store %2)").arg(provider().issuer.host(), m_storeName);
}

void SignIn::inVault(std::function<VaultAnswer(const TokenVault &)> work, std::function<void(VaultAnswer &&)> then, bool writes)
{
    m_vaultSteps.append({std::move(work), std::move(then), writes});
    if (!m_vaultBusy)
        nextVaultStep();
}

void SignIn::nextVaultStep()
{
    if (m_vaultSteps.isEmpty()) {
        m_vaultBusy = false;
        return;
    }
    m_vaultBusy = true;
    VaultStep step = m_vaultSteps.takeFirst();
    {
        QMutexLocker lock(&m_flight->mutex);
        m_flight->running = true;
    }
    runOnPool<VaultAnswer>(blockingPool(), this, [work = std::move(step.work), vault = m_vault, flight = m_flight] {
        VaultAnswer answer = work(*vault);
        // Sealing used OpenSSL on this pool thread: its per-thread state given back (a pool thread may outlive
        // OpenSSL's clean-up at exit).
        OPENSSL_thread_stop();
        QMutexLocker lock(&flight->mutex);
        flight->running = false;
        flight->done.wakeAll();
        return answer;
    },
                           [this, then = std::move(step.then)](VaultAnswer &&answer) {
                               then(std::move(answer));
                               nextVaultStep();
                           });
}

void SignIn::finishVault()
{
    {
        QMutexLocker lock(&m_flight->mutex);
        if (m_flight->running && !m_flight->done.wait(&m_flight->mutex, QDeadlineTimer(10000)))
            qCWarning(lcStores).noquote() << "sign-in: the keyring did not answer before the program ended";
    }
    for (const VaultStep &step : std::as_const(m_vaultSteps)) {
        if (step.writes)
            step.work(*m_vault);
    }
    m_vaultSteps.clear();
}

void SignIn::readKept(std::function<void(std::optional<OidcTokens>, const Error &)> then)
{
    const QString key = provider().key();
    inVault([key, keepsNone = !m_config.signIn.keepBetweenPrograms](const TokenVault &vault) {
        VaultAnswer a;
        if (keepsNone) {
            // The hospital keeps no sign-in between programs: one an earlier program kept (before the policy) is
            // taken out, to be revoked — not left valid on the disk or in the keyring.
            Result<std::optional<OidcTokens>> left = vault.takeLeftover(key);
            if (left.isOk())
                a.ended = left.value();
            else
                a.error = left.error();
            return a;
        }
        Result<std::optional<OidcTokens>> r = vault.read(key, &a.ended);
        if (r.isOk())
            a.tokens = r.value();
        else
            a.error = r.error();
        return a;
    },
            [this, then = std::move(then)](VaultAnswer &&a) {
                if (a.error.isError())
                    qCWarning(lcStores).noquote() << "sign-in: what was kept cannot be read:" << a.error.message();
                if (!a.ended)
                    return then(std::move(a.tokens), a.error);
                // Revoked before going on: a command may end right after (the provider told, not only the keyring).
                revokeLeftover(*a.ended, m_config.signIn.keepBetweenPrograms ? QStringLiteral("the keyring's sign-in, older than a sign-out made without the keyring,")
                                                                             : QStringLiteral("a sign-in kept before the hospital's policy"),
                               [then, tokens = std::move(a.tokens), error = a.error]() mutable { then(std::move(tokens), error); });
            });
}

void SignIn::keep(bool locked, std::function<void(const Error &, const QString &)> then)
{
    OidcTokens t;
    {
        QMutexLocker lock(&m_mutex);
        t = m_tokens;
    }
    inVault([key = provider().key(), t, locked](const TokenVault &vault) {
        // Under the lock every program of the user takes before it writes: none loses another's renewal.
        std::optional<FileLock> lock;
        if (!locked)
            lock.emplace(vault.lockPath(), true);
        VaultAnswer a;
        a.error = vault.write(key, t, &a.where);
        return a;
    },
            [then = std::move(then)](VaultAnswer &&a) { then(a.error, a.where); }, true);
}

void SignIn::adopt(const OidcTokens &tokens)
{
    {
        QMutexLocker lock(&m_mutex);
        const QJsonObject claims = tokens.claims.isEmpty() ? m_tokens.claims : tokens.claims;  // a refresh may bring no ID token
        m_tokens = tokens;
        m_tokens.claims = claims;
    }
    // The reader of the audit trail from now on.
    AuditUser u;
    const QJsonObject c = m_tokens.claims;
    for (const char *claim : {"preferred_username", "email", "sub"}) {
        u.id = c.value(QLatin1String(claim)).toString();
        if (!u.id.isEmpty())
            break;
    }
    u.name = c.value(QStringLiteral("name")).toString();
    u.alternativeId = c.value(QStringLiteral("sub")).toString();
    u.identityProvider = provider().issuer.toString();
    if (!u.id.isEmpty())
        setAuditUser(u);
}

void SignIn::forget(std::function<void()> then)
{
    m_renewal.stop();
    ++m_generation;  // a renewal still on its way is not taken
    {
        QMutexLocker lock(&m_mutex);
        m_tokens = OidcTokens();
    }
    keep(false, [then = std::move(then)](const Error &e, const QString &) {
        if (e.isError())
            qCWarning(lcStores).noquote() << "sign-in:" << e.message();
        if (then)
            then();
    });
    resetAuditUser();
}

void SignIn::scheduleRenewal()
{
    const QDateTime expires = accessExpires();
    if (!expires.isValid())
        return;
    // A minute before it ends — or halfway, for a token that lives less than two minutes.
    const qint64 left = QDateTime::currentDateTimeUtc().msecsTo(expires);
    const qint64 ahead = std::min<qint64>(kRenewAheadSeconds * 1000, left / 2);
    m_renewal.start(int(std::clamp<qint64>(left - ahead, 1000, 24LL * 3600 * 1000)));
}

void SignIn::renewIfDue()
{
    {
        QMutexLocker l(&m_mutex);
        m_renewQueued = false;
    }
    // Renewed already since it was asked for (each renewal revokes the access token before it at the provider:
    // renewing twice would take away the token a request is carrying).
    const QDateTime expires = accessExpires();
    if (m_renewing || (expires.isValid() && QDateTime::currentDateTimeUtc() < expires))
        return;
    renew();
}

void SignIn::renew()
{
    qCDebug(lcStores).noquote() << "sign-in: renewing" << provider().key() << (m_renewing ? "(already under way)" : "");
    if (m_renewing)
        return;
    // Another program of this user may be renewing (one refresh token, rotated): wait for it, then take its tokens.
    auto lock = std::make_shared<FileLock>(m_vault->lockPath());
    if (!lock->held()) {
        m_renewal.start(1000);
        return;
    }
    m_renewing = true;
    const quint64 generation = m_generation;
    // What is kept is the newest: another program may have renewed (and the provider replaced the refresh token
    // this one holds).
    readKept([this, lock, generation](std::optional<OidcTokens> other, const Error &unread) {
        if (generation != m_generation) {
            m_renewing = false;
            return;  // signed out (or in anew) meanwhile
        }
        if (unread.isError()) {
            // Not knowing what another program kept, the refresh token held here may be one the provider has
            // replaced since: using it would end the sign-in. Tried again later.
            m_renewing = false;
            lock->release();
            m_renewal.start(30000);
            return;
        }
        QString refreshToken;
        {
            QMutexLocker l(&m_mutex);
            refreshToken = m_tokens.refreshToken;
        }
        if (other) {
            const QDateTime now = QDateTime::currentDateTimeUtc();
            const QDateTime mine = accessExpires();
            if (other->accessToken != accessToken() && other->accessExpires.isValid() && now.secsTo(other->accessExpires) > 5
                && (!mine.isValid() || other->accessExpires > mine)) {
                m_renewing = false;
                adopt(*other);
                scheduleRenewal();
                Q_EMIT changed();
                return;
            }
            if (!other->refreshToken.isEmpty())
                refreshToken = other->refreshToken;
        }
        if (refreshToken.isEmpty()) {
            m_renewing = false;
            qCWarning(lcStores).noquote() << "sign-in: the access token expires and there is no refresh token:" << hint();
            lock->release();
            forget();
            Q_EMIT changed();
            return;
        }
        ResultJob<OidcTokens> *job = m_client.refresh(refreshToken);
        connect(job, &Job::finished, this, [this, job, lock, generation] {
            m_renewing = false;
            if (generation != m_generation) {
                lock->release();
                return;  // signed out (or in anew) meanwhile: this renewal is not the sign-in's any more
            }
            // Kept under the lock still held, which goes as soon as it is written: a sign-out that follows writes
            // after it.
            const auto written = [lock](const Error &e, const QString &) {
                lock->release();
                if (e.isError())
                    qCWarning(lcStores).noquote() << "sign-in: not kept for the next program:" << e.message();
            };
            const Result<OidcTokens> &r = job->result();
            if (r.isOk()) {
                adopt(r.value());
                keep(true, written);
                qCInfo(lcStores).noquote() << "sign-in: renewed for" << userName() << "until" << accessExpires().toString(Qt::ISODate);
                scheduleRenewal();
            } else if (r.error().code() == ErrorCode::Authentication) {
                qCWarning(lcStores).noquote() << "sign-in: ended by the identity provider (" << r.error().message() << "):" << hint();
                ++m_generation;
                m_renewal.stop();
                {
                    QMutexLocker l(&m_mutex);
                    m_tokens = OidcTokens();
                }
                keep(true, written);
                resetAuditUser();
            } else {
                qCWarning(lcStores).noquote() << "sign-in: not renewed, tried again in 30 s:" << r.error().message();
                m_renewal.start(30000);
                lock->release();
            }
            Q_EMIT changed();
        });
        job->start(ExecutionPolicy::Async);
    });
}

ResultJob<Done> *SignIn::signIn(std::function<void(const QUrl &)> openBrowser)
{
    if (m_signingIn)
        return failedJob<Done>(Error(ErrorCode::Busy, QStringLiteral("a sign-in to %1 is already waiting in the browser").arg(provider().issuer.host())));
    m_signingIn = true;
    QPointer<SignIn> self(this);
    return new CallbackJob<Done>([self, openBrowser](CallbackJob<Done> *job) {
        if (!self)
            return job->complete(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
        ResultJob<OidcTokens> *in = self->m_client.signIn(openBrowser);
        QObject::connect(job, &Job::finished, self, [self] { self->m_signingIn = false; });
        in->setParent(job);
        QObject::connect(in, &Job::finished, job, [self, in, job] {
            if (!self)
                return job->complete(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
            const Result<OidcTokens> &r = in->result();
            const auditevents::Peer idp = providerPeer(self->provider());
            if (!r.isOk()) {
                audit(auditevents::userAuthentication(true, idp,
                                                      r.error().code() == ErrorCode::Authentication ? AuditMessage::Outcome::SeriousFailure : AuditMessage::Outcome::MinorFailure,
                                                      r.error().message()));
                return job->complete(r.error());
            }
            ++self->m_generation;  // a renewal of an earlier sign-in still on its way is not taken
            self->adopt(r.value());
            audit(auditevents::userAuthentication(true, idp));
            self->scheduleRenewal();
            Q_EMIT self->changed();
            // Done once kept: a command that signed in ends right after.
            self->keep(false, [job = QPointer<CallbackJob<Done>>(job)](const Error &e, const QString &where) {
                if (e.isError())
                    qCWarning(lcStores).noquote() << "sign-in: signed in, but not kept for the next program:" << e.message();
                else
                    qCInfo(lcStores).noquote() << "sign-in: kept in" << where;
                if (job)
                    job->complete(Done());
            });
        });
        in->start(ExecutionPolicy::Async);
    });
}

ResultJob<Done> *SignIn::signOut()
{
    QPointer<SignIn> self(this);
    return new CallbackJob<Done>([self](CallbackJob<Done> *job) {
        if (!self)
            return job->complete(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
        OidcTokens t;
        {
            QMutexLocker lock(&self->m_mutex);
            t = self->m_tokens;
        }
        // Forgotten here first — whatever the provider says, and however long it takes to say it.
        audit(auditevents::userAuthentication(false, providerPeer(self->provider())));
        self->forget([self, job = QPointer<CallbackJob<Done>>(job), t] {
            if (!job)
                return;  // cancelled meanwhile
            if (t.refreshToken.isEmpty() && t.accessToken.isEmpty())
                return job->complete(Done());  // nothing the provider could revoke
            // The refresh token is the sign-in: revoked, the access tokens made from it go too (RFC 7009 2.1).
            ResultJob<Done> *revoke = self->m_client.revoke(t.refreshToken.isEmpty() ? t.accessToken : t.refreshToken,
                                                            t.refreshToken.isEmpty() ? QStringLiteral("access_token") : QStringLiteral("refresh_token"));
            revoke->setParent(job);
            QObject::connect(revoke, &Job::finished, job, [revoke, job] {
                if (!revoke->result().isOk())
                    return job->complete(Error(revoke->result().error().code(), QStringLiteral("signed out here, but the identity provider could not be told: %1")
                                                                                    .arg(revoke->result().error().message())));
                job->complete(Done());
            });
            revoke->start(ExecutionPolicy::Async);
        });
        Q_EMIT self->changed();
    });
}

ResultJob<Done> *SignIn::ready()
{
    QPointer<SignIn> self(this);
    return new CallbackJob<Done>([self](CallbackJob<Done> *job) {
        if (!self)
            return job->complete(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
        // After every step queued before it: the first is the read the sign-in began with.
        self->readKept([self, job = QPointer<CallbackJob<Done>>(job)](std::optional<OidcTokens>, const Error &unread) {
            if (!job)
                return;
            if (unread.isError())
                return job->complete(unread);
            job->complete(Done());
        });
    });
}

ResultJob<Done> *SignIn::resume()
{
    QPointer<SignIn> self(this);
    return new CallbackJob<Done>([self](CallbackJob<Done> *job) {
        if (!self)
            return job->complete(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
        const quint64 generation = self->m_generation;
        self->readKept([self, job = QPointer<CallbackJob<Done>>(job), generation](std::optional<OidcTokens> t, const Error &) {
            if (!job)
                return;
            if (t && generation == self->m_generation)  // not after a sign-in or sign-out made meanwhile
                self->adopt(*t);
            bool refreshable = false;
            {
                QMutexLocker lock(&self->m_mutex);
                refreshable = !self->m_tokens.refreshToken.isEmpty();
            }
            if (!self->isSignedIn() && !refreshable)
                return job->complete(Done());
            const QDateTime expires = self->accessExpires();
            qCDebug(lcStores).noquote() << "sign-in: resuming" << self->provider().key() << "expires" << expires.toString(Qt::ISODateWithMs);
            if (expires.isValid() && QDateTime::currentDateTimeUtc().secsTo(expires) > kRenewAheadSeconds) {
                self->scheduleRenewal();
                return job->complete(Done());
            }
            // (Nearly) expired: renewed before anything is asked with it.
            QObject::connect(self, &SignIn::changed, job, [self, job] {
                if (!self)
                    return job->complete(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
                if (!self->isSignedIn())
                    return job->complete(Error(ErrorCode::Authentication, QStringLiteral("the sign-in has ended: %1").arg(self->hint())));
                job->complete(Done());
            });
            self->renew();
        });
    });
}

ResultJob<QString> *SignIn::identityToken(int minSeconds)
{
    QPointer<SignIn> self(this);
    return new CallbackJob<QString>([self, minSeconds](CallbackJob<QString> *job) {
        if (!self)
            return job->complete(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
        // The ID token held, when it is valid long enough (its own expiry, read from it).
        const auto fresh = [self, minSeconds]() -> QString {
            QMutexLocker lock(&self->m_mutex);
            const QString token = self->m_tokens.idToken;
            const QByteArray payload = QByteArray::fromBase64(token.section(QLatin1Char('.'), 1, 1).toLatin1(), QByteArray::Base64UrlEncoding);
            const QJsonObject claims = QJsonDocument::fromJson(payload).object();
            const qint64 exp = qint64(claims.value(QStringLiteral("exp")).toDouble()), iat = qint64(claims.value(QStringLiteral("iat")).toDouble());
            // A provider whose ID tokens live a few minutes: half their life is long enough.
            const qint64 wanted = iat > 0 && exp > iat ? std::min<qint64>(minSeconds, (exp - iat) / 2) : minSeconds;
            return exp > 0 && QDateTime::currentSecsSinceEpoch() + wanted <= exp ? token : QString();
        };
        // After what an earlier program kept has been read.
        whenDone(self->ready(), job, [self, job, fresh](const Result<Done> &read) {
            if (!self)
                return job->complete(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
            if (!read.isOk())
                return job->complete(read.error());
            if (const QString token = fresh(); !token.isEmpty())
                return job->complete(token);
            if (!self->holdsTokens())
                return job->complete(Error(ErrorCode::Authentication, QStringLiteral("not signed in: %1").arg(self->hint())));
            // Renewed first: the provider gives a new ID token with the new access token.
            QObject::connect(self, &SignIn::changed, job, [self, job, fresh] {
                if (!self->isSignedIn())
                    return job->complete(Error(ErrorCode::Authentication, QStringLiteral("the sign-in has ended: %1").arg(self->hint())));
                if (const QString token = fresh(); !token.isEmpty())
                    return job->complete(token);
                job->complete(Error(ErrorCode::Authentication, QStringLiteral("the identity provider gave no ID token valid long enough to be traded for "
                                                                              "the store's credentials: %1").arg(self->hint())));
            });
            self->renew();
        });
    });
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/signin/signin.h"

#include "spectrum/core/audit/audit.h"
#include "spectrum/core/audit/auditevents.h"
#include "spectrum/core/logging.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QPointer>
#include <QSaveFile>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

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

QJsonObject tokensJson(const OidcTokens &t)
{
    return QJsonObject{{QStringLiteral("access"), t.accessToken},
                       {QStringLiteral("refresh"), t.refreshToken},
                       {QStringLiteral("id"), t.idToken},
                       {QStringLiteral("expires"), t.accessExpires.isValid() ? t.accessExpires.toString(Qt::ISODate) : QString()},
                       {QStringLiteral("claims"), t.claims}};
}

OidcTokens tokensFromJson(const QJsonObject &o)
{
    OidcTokens t;
    t.accessToken = o.value(QStringLiteral("access")).toString();
    t.refreshToken = o.value(QStringLiteral("refresh")).toString();
    t.idToken = o.value(QStringLiteral("id")).toString();
    t.accessExpires = QDateTime::fromString(o.value(QStringLiteral("expires")).toString(), Qt::ISODate);
    t.claims = o.value(QStringLiteral("claims")).toObject();
    return t;
}

/// An exclusive lock on `path` while it lives (none when another process holds it).
class FileLock
{
public:
    /// `wait`: up to two seconds (another program's renewal is a round trip to the provider); otherwise not at all.
    explicit FileLock(const QString &path, bool wait = false)
    {
        m_fd = ::open(QFile::encodeName(path).constData(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (m_fd < 0)
            return;
        for (int tries = wait ? 100 : 1; tries > 0; --tries) {
            if (::flock(m_fd, LOCK_EX | LOCK_NB) == 0)
                return;
            if (tries > 1)
                ::usleep(20000);
        }
        ::close(m_fd);
        m_fd = -1;
    }
    ~FileLock() { release(); }
    /// Lets go before the lock itself goes (a renewal's lock, held by its callback until the job is deleted).
    void release()
    {
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = -1;
    }
    FileLock(const FileLock &) = delete;
    FileLock &operator=(const FileLock &) = delete;
    bool held() const { return m_fd >= 0; }

private:
    int m_fd = -1;
};

auditevents::Peer providerPeer(const OidcProvider &p)
{
    return auditevents::Peer{p.issuer.toString(), p.clientId, p.issuer.host()};
}

} // namespace

SignIn *SignIn::forStore(const StoreConfig &store, const StoreConfigFile &config)
{
    const DicomWebSettings *web = store.ifKind<DicomWebSettings>();
    if (!web || web->auth != QLatin1String("oidc"))
        return nullptr;
    OidcProvider p;
    p.issuer = QUrl(web->issuer);
    p.clientId = web->clientId;
    p.audience = web->audience;
    p.caFile = web->caFile;
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
    m_renewal.setSingleShot(true);
    connect(&m_renewal, &QTimer::timeout, this, &SignIn::renew);
    if (std::optional<OidcTokens> t = kept()) {
        adopt(*t);
        scheduleRenewal();
    }
}

SignIn::~SignIn()
{
    QMutexLocker lock(&m_handle->mutex);  // a request asking for the token now finishes asking first
    m_handle->signIn = nullptr;
}

std::function<QString()> SignIn::accessTokenSource() const
{
    return [handle = m_handle]() {
        QMutexLocker lock(&handle->mutex);
        return handle->signIn ? handle->signIn->accessToken() : QString();
    };
}

bool SignIn::isSignedIn() const
{
    QMutexLocker lock(&m_mutex);
    return !m_tokens.accessToken.isEmpty();
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
    return QStringLiteral("sign in again to %1 (File > Sign in…, or spectrum-cli login --store %2)").arg(provider().issuer.host(), m_storeName);
}

QString SignIn::vaultPath() const
{
    return QFileInfo(m_config.path()).absolutePath() + QStringLiteral("/sign-in.json");
}

std::optional<OidcTokens> SignIn::kept() const
{
    QFile f(vaultPath());
    if (!f.open(QIODevice::ReadOnly))
        return std::nullopt;
    const QJsonValue sealed = QJsonDocument::fromJson(f.read(1 << 20)).object().value(QStringLiteral("sessions")).toObject().value(provider().key());
    if (sealed.isUndefined())
        return std::nullopt;
    Result<Secret> secret = Secret::fromJson(sealed, vaultPath());
    if (!secret.isOk())
        return std::nullopt;
    Result<QString> plain = m_config.reveal(secret.value());
    if (!plain.isOk()) {
        qCWarning(lcStores).noquote() << "sign-in: what was kept in" << vaultPath() << "cannot be opened:" << plain.error().message();
        return std::nullopt;
    }
    OidcTokens t = tokensFromJson(QJsonDocument::fromJson(plain.value().toUtf8()).object());
    if (t.accessToken.isEmpty() && t.refreshToken.isEmpty())
        return std::nullopt;
    return t;
}

Error SignIn::persist() const
{
    // Under the lock every program of the user takes before it writes the file: none loses another's renewal.
    FileLock lock(vaultPath() + QStringLiteral(".lock"), true);
    return persistLocked();
}

Error SignIn::persistLocked() const
{
    QJsonObject root;
    {
        QFile f(vaultPath());
        if (f.open(QIODevice::ReadOnly))
            root = QJsonDocument::fromJson(f.read(1 << 20)).object();
    }
    QJsonObject sessions = root.value(QStringLiteral("sessions")).toObject();
    OidcTokens t;
    {
        QMutexLocker lock(&m_mutex);
        t = m_tokens;
    }
    if (t.accessToken.isEmpty() && t.refreshToken.isEmpty()) {
        sessions.remove(provider().key());
    } else {
        Result<Secret> sealed = m_config.seal(QString::fromUtf8(QJsonDocument(tokensJson(t)).toJson(QJsonDocument::Compact)));
        if (!sealed.isOk())
            return sealed.error();
        sessions.insert(provider().key(), sealed.value().toJson());
    }
    root.insert(QStringLiteral("version"), 1);
    root.insert(QStringLiteral("sessions"), sessions);
    QSaveFile out(vaultPath());
    if (!out.open(QIODevice::WriteOnly))
        return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(vaultPath(), out.errorString()));
    out.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    out.write(QJsonDocument(root).toJson(QJsonDocument::Indented));
    if (!out.commit())
        return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(vaultPath(), out.errorString()));
    return Error();
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

void SignIn::forget()
{
    m_renewal.stop();
    ++m_generation;  // a renewal still on its way is not taken
    {
        QMutexLocker lock(&m_mutex);
        m_tokens = OidcTokens();
    }
    if (Error e = persist(); e.isError())
        qCWarning(lcStores).noquote() << "sign-in:" << e.message();
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
    auto lock = std::make_shared<FileLock>(vaultPath() + QStringLiteral(".lock"));
    if (!lock->held()) {
        m_renewal.start(1000);
        return;
    }
    QString refreshToken;
    {
        QMutexLocker l(&m_mutex);
        refreshToken = m_tokens.refreshToken;
    }
    // What is on the disk is the newest: another program may have renewed (and the provider replaced the refresh
    // token this one holds).
    if (std::optional<OidcTokens> other = kept()) {
        const QDateTime now = QDateTime::currentDateTimeUtc();
        const QDateTime mine = accessExpires();
        if (other->accessToken != accessToken() && other->accessExpires.isValid() && now.secsTo(other->accessExpires) > 5
            && (!mine.isValid() || other->accessExpires > mine)) {
            adopt(*other);
            scheduleRenewal();
            Q_EMIT changed();
            return;
        }
        if (!other->refreshToken.isEmpty())
            refreshToken = other->refreshToken;
    }
    if (refreshToken.isEmpty()) {
        qCWarning(lcStores).noquote() << "sign-in: the access token expires and there is no refresh token:" << hint();
        forget();
        Q_EMIT changed();
        return;
    }
    m_renewing = true;
    const quint64 generation = m_generation;
    ResultJob<OidcTokens> *job = m_client.refresh(refreshToken);
    connect(job, &Job::finished, this, [this, job, lock, generation] {
        m_renewing = false;
        if (generation != m_generation) {
            lock->release();
            return;  // signed out (or in anew) meanwhile: this renewal is not the sign-in's any more
        }
        const Result<OidcTokens> &r = job->result();
        if (r.isOk()) {
            adopt(r.value());
            if (Error e = persistLocked(); e.isError())
                qCWarning(lcStores).noquote() << "sign-in: renewed, but not kept for the next program:" << e.message();
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
            if (Error e = persistLocked(); e.isError())
                qCWarning(lcStores).noquote() << "sign-in:" << e.message();
            resetAuditUser();
        } else {
            qCWarning(lcStores).noquote() << "sign-in: not renewed, tried again in 30 s:" << r.error().message();
            m_renewal.start(30000);
        }
        lock->release();  // before anyone hears of it: a sign-out that follows writes the file under the lock
        Q_EMIT changed();
    });
    job->start(ExecutionPolicy::Async);
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
            Error kept = self->persist();
            self->scheduleRenewal();
            Q_EMIT self->changed();
            if (kept.isError())
                qCWarning(lcStores).noquote() << "sign-in: signed in, but not kept for the next program:" << kept.message();
            job->complete(Done());
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
        self->forget();
        Q_EMIT self->changed();
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
}

ResultJob<Done> *SignIn::resume()
{
    QPointer<SignIn> self(this);
    return new CallbackJob<Done>([self](CallbackJob<Done> *job) {
        if (!self)
            return job->complete(Error(ErrorCode::Cancelled, QStringLiteral("cancelled")));
        if (std::optional<OidcTokens> t = self->kept())
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
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "signin/tokenvault.h"

#include "spectrum/core/logging.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <mutex>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace spectrum {

FileLock::FileLock(const QString &path, bool wait)
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

void FileLock::release()
{
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
}


namespace {

/// Tokens as kept, and when they were (to tell the newer of two copies apart, to the millisecond).
struct Kept
{
    OidcTokens tokens;
    QDateTime when;
};

QJsonObject tokensJson(const OidcTokens &t)
{
    return QJsonObject{{QStringLiteral("kept"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
                       {QStringLiteral("access"), t.accessToken},
                       {QStringLiteral("refresh"), t.refreshToken},
                       {QStringLiteral("id"), t.idToken},
                       {QStringLiteral("expires"), t.accessExpires.isValid() ? t.accessExpires.toString(Qt::ISODate) : QString()},
                       {QStringLiteral("claims"), t.claims}};
}

std::optional<Kept> tokensFromJson(const QByteArray &json)
{
    const QJsonObject o = QJsonDocument::fromJson(json).object();
    // A sign-out's note: no tokens, and when.
    if (o.contains(QStringLiteral("ended")))
        return Kept{OidcTokens(), QDateTime::fromString(o.value(QStringLiteral("ended")).toString(), Qt::ISODateWithMs)};
    OidcTokens t;
    t.accessToken = o.value(QStringLiteral("access")).toString();
    t.refreshToken = o.value(QStringLiteral("refresh")).toString();
    t.idToken = o.value(QStringLiteral("id")).toString();
    t.accessExpires = QDateTime::fromString(o.value(QStringLiteral("expires")).toString(), Qt::ISODate);
    t.claims = o.value(QStringLiteral("claims")).toObject();
    if (t.accessToken.isEmpty() && t.refreshToken.isEmpty())
        return std::nullopt;
    return Kept{t, QDateTime::fromString(o.value(QStringLiteral("kept")).toString(), Qt::ISODateWithMs)};
}

bool isEmpty(const OidcTokens &t)
{
    return t.accessToken.isEmpty() && t.refreshToken.isEmpty();
}

/// The tokens of the newer of two kept sign-ins: the one kept later — or, for copies that do not say (kept by an
/// older version), the one whose access token ends later. Empty tokens: a sign-out is the newer.
std::optional<OidcTokens> newer(const std::optional<Kept> &a, const std::optional<Kept> &b)
{
    if (!a || !b)
        return a ? a->tokens : b ? std::optional<OidcTokens>(b->tokens) : std::nullopt;
    if (a->when.isValid() && b->when.isValid())
        return b->when > a->when ? b->tokens : a->tokens;
    if (!b->tokens.accessExpires.isValid())
        return a->tokens;
    if (!a->tokens.accessExpires.isValid())
        return b->tokens;
    return b->tokens.accessExpires > a->tokens.accessExpires ? b->tokens : a->tokens;
}

} // namespace

TokenVault::TokenVault(StoreConfigFile config) : m_config(std::move(config))
{
}

QString TokenVault::filePath() const
{
    return QFileInfo(m_config.path()).absolutePath() + QStringLiteral("/sign-in.json");
}

bool TokenVault::keyringPresent()
{
    static bool present = false;
    static std::once_flag asked;
    std::call_once(asked, [] {
        if (qEnvironmentVariable("SPECTRUM_KEYRING").compare(QLatin1String("off"), Qt::CaseInsensitive) == 0)
            return;
        present = secretservice::present();
        qCInfo(lcStores).noquote() << "sign-in: tokens are kept" << (present ? "in the desktop's keyring" : "sealed in sign-in.json (no keyring answers in this session)");
    });
    return present;
}

Result<std::optional<OidcTokens>> TokenVault::read(const QString &providerKey, std::optional<OidcTokens> *ended) const
{
    if (!m_config.signIn.keepBetweenPrograms)
        return std::optional<OidcTokens>();  // the hospital's policy: no sign-in goes on from an earlier program
    return readKept(providerKey, ended);
}

Result<std::optional<OidcTokens>> TokenVault::takeLeftover(const QString &providerKey) const
{
    Result<std::optional<OidcTokens>> kept = readKept(providerKey);
    if (!kept.isOk() || !kept.value())
        return kept;
    const QString folder = QFileInfo(filePath()).absolutePath();
    const Error ring = keyringPresent() ? secretservice::clear(folder, providerKey) : Error();
    const Error file = writeFile(providerKey, OidcTokens());
    if (file.isError() || ring.isError())
        return file.isError() ? file : ring;
    return kept;
}

Result<std::optional<OidcTokens>> TokenVault::readKept(const QString &providerKey, std::optional<OidcTokens> *ended) const
{
    auto tokensOnly = [](std::optional<OidcTokens> t) { return t && !isEmpty(*t) ? t : std::nullopt; };
    Result<std::optional<QByteArray>> fileJson = readFile(providerKey);
    const std::optional<Kept> fromFile = fileJson.isOk() && fileJson.value() ? tokensFromJson(*fileJson.value()) : std::nullopt;
    if (!keyringPresent())
        return fileJson.isOk() ? Result<std::optional<OidcTokens>>(tokensOnly(newer(fromFile, std::nullopt))) : fileJson.error();
    const QString folder = QFileInfo(filePath()).absolutePath();
    Result<std::optional<QByteArray>> ring = secretservice::lookup(folder, providerKey);
    if (!ring.isOk()) {
        if (fromFile)
            return tokensOnly(newer(fromFile, std::nullopt));
        return ring.error();
    }
    const std::optional<Kept> fromRing = ring.value() ? tokensFromJson(*ring.value()) : std::nullopt;
    if (!fileJson.isOk() && !fromRing)
        return fileJson.error();
    const std::optional<OidcTokens> chosen = newer(fromRing, fromFile);
    if (chosen && isEmpty(*chosen) && fromRing && !isEmpty(fromRing->tokens)) {
        // Signed out since, where the keyring could not be reached: the keyring's older sign-in ends too.
        if (secretservice::clear(folder, providerKey).isError())
            qCWarning(lcStores).noquote() << "sign-in: the keyring's copy of a sign-in ended elsewhere could not be taken out";
        writeFile(providerKey, OidcTokens(), /*note=*/false);
        if (ended)
            *ended = fromRing->tokens;
    }
    return tokensOnly(chosen);
}

Error TokenVault::write(const QString &providerKey, const OidcTokens &tokens, QString *where) const
{
    const QString folder = QFileInfo(filePath()).absolutePath();
    if (!m_config.signIn.keepBetweenPrograms) {
        // Held by the program alone: what an earlier program kept (before the policy) is taken out, nothing is added.
        if (where)
            *where = QStringLiteral("this program's memory alone (the hospital's sign-in policy)");
        const Error ring = keyringPresent() ? secretservice::clear(folder, providerKey) : Error();
        const Error file = writeFile(providerKey, OidcTokens());
        return file.isError() ? file : ring;
    }
    if (keyringPresent()) {
        if (isEmpty(tokens)) {
            const Error ring = secretservice::clear(folder, providerKey);
            const Error file = writeFile(providerKey, tokens);
            if (where)
                *where = QStringLiteral("the desktop's keyring");
            return ring.isError() ? ring : file;
        }
        const QString label = QStringLiteral("Spectrum sign-in to %1").arg(providerKey.section(QLatin1Char('|'), 0, 0));
        const Error ring = secretservice::store(folder, providerKey, label, QJsonDocument(tokensJson(tokens)).toJson(QJsonDocument::Compact));
        if (!ring.isError()) {
            if (where)
                *where = QStringLiteral("the desktop's keyring");
            return writeFile(providerKey, OidcTokens());  // no second copy of the refresh token on the disk
        }
        qCWarning(lcStores).noquote() << "sign-in: the keyring did not take the tokens, they are sealed in" << filePath() << "instead:" << ring.message();
    }
    if (where)
        *where = filePath();
    return writeFile(providerKey, tokens, /*note=*/isEmpty(tokens));
}

Result<std::optional<QByteArray>> TokenVault::readFile(const QString &providerKey) const
{
    QFile f(filePath());
    if (!f.open(QIODevice::ReadOnly))
        return std::optional<QByteArray>();
    const QJsonValue sealed = QJsonDocument::fromJson(f.read(1 << 20)).object().value(QStringLiteral("sessions")).toObject().value(providerKey);
    if (sealed.isUndefined())
        return std::optional<QByteArray>();
    if (sealed.toObject().contains(QStringLiteral("ended")))  // a sign-out's note, nothing sealed
        return std::optional<QByteArray>(QJsonDocument(sealed.toObject()).toJson(QJsonDocument::Compact));
    Result<Secret> secret = Secret::fromJson(sealed, filePath());
    if (!secret.isOk())
        return secret.error();
    Result<QString> plain = m_config.reveal(secret.value());
    if (!plain.isOk())
        return Error(plain.error().code(), QStringLiteral("what was kept in %1 cannot be opened: %2").arg(filePath(), plain.error().message()));
    return std::optional<QByteArray>(plain.value().toUtf8());
}

Error TokenVault::writeFile(const QString &providerKey, const OidcTokens &tokens, bool note) const
{
    QJsonObject root;
    {
        QFile f(filePath());
        if (f.open(QIODevice::ReadOnly))
            root = QJsonDocument::fromJson(f.read(1 << 20)).object();
    }
    QJsonObject sessions = root.value(QStringLiteral("sessions")).toObject();
    if (isEmpty(tokens) && note) {
        // A sign-out where the keyring is out of reach: noted, so that the keyring's copy, older, is not taken up
        // again by the next program that reaches it (which ends it).
        sessions.insert(providerKey, QJsonObject{{QStringLiteral("ended"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)}});
    } else if (isEmpty(tokens)) {
        if (!sessions.contains(providerKey))
            return Error();  // nothing to take out (and no file made for nothing)
        sessions.remove(providerKey);
    } else {
        Result<Secret> sealed = m_config.seal(QString::fromUtf8(QJsonDocument(tokensJson(tokens)).toJson(QJsonDocument::Compact)));
        if (!sealed.isOk())
            return sealed.error();
        sessions.insert(providerKey, sealed.value().toJson());
    }
    root.insert(QStringLiteral("version"), 1);
    root.insert(QStringLiteral("sessions"), sessions);
    QSaveFile out(filePath());
    if (!out.open(QIODevice::WriteOnly))
        return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(filePath(), out.errorString()));
    out.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    out.write(QJsonDocument(root).toJson(QJsonDocument::Indented));
    if (!out.commit())
        return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(filePath(), out.errorString()));
    return Error();
}

} // namespace spectrum

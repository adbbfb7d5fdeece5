// SPDX-License-Identifier: Apache-2.0
// The store configuration file: read over the system's, saved with only what differs, secrets sealed and revealed.
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/archives/archivekind.h"

#include "spectrum/core/privatefile.h"
#include "spectrum/core/settings.h"

#include "spectrum/transfer/dimse.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QHostAddress>
#include <QSysInfo>
#include <QJsonDocument>
#include <QStandardPaths>
#include <QRegularExpression>
#include <QUrl>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <limits>

namespace spectrum {

namespace {

constexpr int kKeyBytes = 32, kNonceBytes = 12, kTagBytes = 16;
const QString kSealedPrefix = QStringLiteral("aes256gcm:");

Error writePrivately(const QString &path, const QByteArray &bytes)
{
    const QString dir = QFileInfo(path).absolutePath();
    if (!QDir().mkpath(dir))
        return Error(ErrorCode::Io, QStringLiteral("cannot create %1").arg(dir));
    const QString tmp = path + QStringLiteral(".tmp-%1").arg(::getpid());
    const QByteArray tmpName = QFile::encodeName(tmp);
    const int fd = ::open(tmpName.constData(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, S_IRUSR | S_IWUSR);
    if (fd < 0)
        return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(tmp, QString::fromLocal8Bit(std::strerror(errno))));
    ::fchmod(fd, S_IRUSR | S_IWUSR);  // also if it existed with wider rights
    qint64 done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.constData() + done, size_t(bytes.size() - done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int err = errno;
            ::close(fd);
            ::unlink(tmpName.constData());
            return Error(err == ENOSPC ? ErrorCode::DiskFull : ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(tmp, QString::fromLocal8Bit(std::strerror(err))));
        }
        done += n;
    }
    const bool synced = ::fsync(fd) == 0;
    ::close(fd);
    if (!synced || ::rename(tmpName.constData(), QFile::encodeName(path).constData()) != 0) {
        const int err = errno;
        ::unlink(tmpName.constData());
        return Error(ErrorCode::Io, QStringLiteral("cannot replace %1: %2").arg(path, QString::fromLocal8Bit(std::strerror(err))));
    }
    return Error();
}

} // namespace

// ---- the file ----

QString StoreConfigFile::defaultPath()
{
    const QString env = qEnvironmentVariable("SPECTRUM_CONFIG");
    if (!env.isEmpty())
        return env;
    return WorkstationPaths::configDirectory() + QStringLiteral("/stores.json");
}

QString StoreConfigFile::systemPath()
{
    const QString env = qEnvironmentVariable("SPECTRUM_SYSTEM_CONFIG");
    return env.isEmpty() ? QStringLiteral("/etc/spectrum/stores.json") : env;
}

Result<StoreConfigFile> StoreConfigFile::load(const QString &path)
{
    Result<StoreConfigFile> f = loadOverSystem(path);
    if (!f.isOk())
        return f;
    // The hospital's sign-in policy holds wherever $SPECTRUM_SYSTEM_CONFIG points: a user's variable does not lift it.
    const QString etc = QStringLiteral("/etc/spectrum/stores.json");
    if (QFileInfo(systemPath()).absoluteFilePath() != etc && QFileInfo(path).absoluteFilePath() != etc && QFile::exists(etc)) {
        QFile hospitalFile(etc);
        if (!hospitalFile.open(QIODevice::ReadOnly))
            return Error(ErrorCode::Io, QStringLiteral("cannot read the hospital's configuration %1: %2").arg(etc, hospitalFile.errorString()));
        Result<StoreConfigFile> hospital = parse(hospitalFile.read(4 << 20), etc);
        if (!hospital.isOk())
            return hospital.error();
        if (hospital.value().signIn.isSet()) {
            f.value().signIn = hospital.value().signIn;
            f.value().signIn.fromSystem = true;
        }
    }
    return f;
}

Result<StoreConfigFile> StoreConfigFile::loadOverSystem(const QString &path)
{
    QByteArray user = "{}";
    QFile file(path);
    if (file.exists()) {
        if (!file.open(QIODevice::ReadOnly))
            return Error(ErrorCode::Io, QStringLiteral("cannot read %1: %2").arg(path, file.errorString()));
        user = file.read(4 << 20);
    }
    const QString systemFile = systemPath();
    QFile system(systemFile);
    if (systemFile.isEmpty() || !system.exists() || QFileInfo(systemFile).canonicalFilePath() == QFileInfo(path).canonicalFilePath())
        return parse(user, path);
    if (!system.open(QIODevice::ReadOnly))
        return Error(ErrorCode::Io, QStringLiteral("cannot read the system configuration %1: %2").arg(systemFile, system.errorString()));
    const QByteArray systemBytes = system.read(4 << 20);
    // The system's alone first: its mistakes named as its own.
    Result<StoreConfigFile> base = parse(systemBytes, systemFile);
    if (!base.isOk())
        return base.error();
    for (const StoreConfig &s : base.value().stores()) {
        for (const Secret *secret : s.secrets()) {
            if (secret->source == Secret::Source::Sealed)
                return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: store '%2' has a sealed secret, which no user can open: provision each user's "
                                                                        "own as {\"file\": \"~/.config/Spectrum/%2.secret\"} (readable by the user alone) "
                                                                        "or {\"env\": VARIABLE}").arg(systemFile, s.name));
        }
    }
    if (base.value().workstation.shareToken.source == Secret::Source::Sealed)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: the share token is sealed, which no user can open: use {\"file\": …} or {\"env\": …}").arg(systemFile));
    // The user's over it, field by field and store by store.
    QJsonParseError pe{};
    const QJsonDocument userDoc = QJsonDocument::fromJson(user, &pe);
    if (!userDoc.isObject())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1 is not a store configuration (JSON: %2 at offset %3)").arg(path, pe.errorString()).arg(pe.offset));
    const QJsonObject systemRoot = QJsonDocument::fromJson(systemBytes).object(), userRoot = userDoc.object();
    QJsonObject ws = systemRoot.value(QStringLiteral("workstation")).toObject();
    const QJsonObject userWs = userRoot.value(QStringLiteral("workstation")).toObject();
    for (auto it = userWs.begin(); it != userWs.end(); ++it)
        ws.insert(it.key(), it.value());
    QJsonArray stores = systemRoot.value(QStringLiteral("stores")).toArray();
    for (const QJsonValue &u : userRoot.value(QStringLiteral("stores")).toArray()) {
        const QString name = u.toObject().value(QStringLiteral("name")).toString();
        bool replaced = false;
        for (int i = 0; i < stores.size() && !replaced; ++i) {
            if (stores.at(i).toObject().value(QStringLiteral("name")).toString() == name) {
                stores.replace(i, u);
                replaced = true;
            }
        }
        if (!replaced)
            stores.append(u);
    }
    QJsonObject merged = userRoot;
    merged.insert(QStringLiteral("workstation"), ws);
    merged.insert(QStringLiteral("stores"), stores);
    // The hospital's audit trail is the hospital's: a user's file neither changes nor turns it off.
    if (base.value().audit.isSet())
        merged.remove(QStringLiteral("audit"));
    if (base.value().signIn.isSet())
        merged.remove(QStringLiteral("signIn"));
    Result<StoreConfigFile> f = parse(QJsonDocument(merged).toJson(QJsonDocument::Compact), path);
    if (!f.isOk())
        return f;
    if (base.value().audit.isSet()) {
        f.value().audit = base.value().audit;
        f.value().audit.fromSystem = true;
    }
    if (base.value().signIn.isSet()) {
        f.value().signIn = base.value().signIn;
        f.value().signIn.fromSystem = true;
    }
    f.value().m_systemFile = systemFile;
    f.value().m_systemWorkstation = workstationJson(base.value().workstation);
    for (const StoreConfig &s : base.value().stores())
        f.value().m_systemStores.insert(s.name, s.toJson());
    return f;
}

Result<StoreConfigFile> StoreConfigFile::parse(const QByteArray &json, const QString &path)
{
    StoreConfigFile f;
    f.m_path = path;
    QJsonParseError pe{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (!doc.isObject())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1 is not a store configuration (JSON: %2 at offset %3)").arg(path, pe.errorString()).arg(pe.offset));
    const QJsonObject root = doc.object();
    if (root.value(QStringLiteral("version")).toInt(1) != 1)
        return Error(ErrorCode::Unsupported, QStringLiteral("%1 has version %2; this Spectrum reads version 1").arg(path).arg(root.value(QStringLiteral("version")).toInt()));
    const QJsonObject ws = root.value(QStringLiteral("workstation")).toObject();
    f.workstation.aeTitle = ws.value(QStringLiteral("aeTitle")).toString(f.workstation.aeTitle);
    f.workstation.storagePort = ws.value(QStringLiteral("storagePort")).toInt(f.workstation.storagePort);
    if (!isValidAeTitle(f.workstation.aeTitle))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: workstation aeTitle '%2' is not an AE title").arg(path, f.workstation.aeTitle));
    if (f.workstation.storagePort < 1 || f.workstation.storagePort > 65535)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: workstation storagePort must be 1-65535").arg(path));
    f.workstation.listenAddress = ws.value(QStringLiteral("listenAddress")).toString().trimmed();
    if (!f.workstation.listenAddress.isEmpty() && f.workstation.listenAddress != QLatin1String("any")
        && QHostAddress(f.workstation.listenAddress).protocol() != QAbstractSocket::IPv4Protocol)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: workstation listenAddress '%2' is neither an IPv4 address nor \"any\"")
                                                     .arg(path, f.workstation.listenAddress));
    if (ws.contains(QStringLiteral("tls"))) {
        const QJsonValue tlsValue = ws.value(QStringLiteral("tls"));
        const QJsonObject tls = tlsValue.toObject();
        for (const QString &field : tls.keys()) {
            if (field != QLatin1String("certificate") && field != QLatin1String("key") && field != QLatin1String("clientCa"))
                return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: workstation tls: unknown field '%2' (certificate, key, clientCa)").arg(path, field));
        }
        if (!tlsValue.isObject() || !tls.value(QStringLiteral("certificate")).isString() || !tls.value(QStringLiteral("key")).isString()
            || !(tls.value(QStringLiteral("clientCa")).isString() || tls.value(QStringLiteral("clientCa")).isUndefined()))
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: workstation tls takes {\"certificate\": FILE, \"key\": FILE[, \"clientCa\": FILE]}").arg(path));
        f.workstation.tlsCertificate = tls.value(QStringLiteral("certificate")).toString();
        f.workstation.tlsKey = tls.value(QStringLiteral("key")).toString();
        f.workstation.tlsClientCa = tls.value(QStringLiteral("clientCa")).toString();
        for (const QString &file : {f.workstation.tlsCertificate, f.workstation.tlsKey, f.workstation.tlsClientCa}) {
            if (!file.isEmpty() && !QFileInfo(file).isReadable())
                return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: workstation tls: %2 cannot be read").arg(path, file));
        }
        if (f.workstation.tlsCertificate.isEmpty() || f.workstation.tlsKey.isEmpty())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: workstation tls needs both a certificate and a key").arg(path));
    }
    if (ws.contains(QStringLiteral("share"))) {
        const QJsonObject share = ws.value(QStringLiteral("share")).toObject();
        for (const QString &field : share.keys()) {
            if (field != QLatin1String("port") && field != QLatin1String("token") && field != QLatin1String("address") && field != QLatin1String("plain"))
                return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: workstation share: unknown field '%2' (port, token, address, plain)").arg(path, field));
        }
        const QJsonValue port = share.value(QStringLiteral("port"));
        if (!ws.value(QStringLiteral("share")).isObject() || !port.isDouble() || port.toDouble() < 1 || port.toDouble() > 65535
            || port.toDouble() != double(int(port.toDouble())))
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: workstation share takes {\"port\": 1-65535, \"token\": SECRET}").arg(path));
        Result<Secret> token = Secret::fromJson(share.value(QStringLiteral("token")), path + QStringLiteral(": workstation share token"));
        if (!token.isOk())
            return token.error();
        if (!token.value().isSet())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: workstation share needs a token: a cache is never shared without one").arg(path));
        f.workstation.sharePort = int(port.toDouble());
        f.workstation.shareToken = token.value();
        f.workstation.shareAddress = share.value(QStringLiteral("address")).toString().trimmed();
        f.workstation.sharePlain = share.value(QStringLiteral("plain")).toBool(false);
        if (!f.workstation.shareAddress.isEmpty() && QHostAddress(f.workstation.shareAddress).isNull())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: workstation share address '%2' is not an address").arg(path, f.workstation.shareAddress));
    }
    if (ws.contains(QStringLiteral("callers"))) {
        const QJsonValue callers = ws.value(QStringLiteral("callers"));
        if (!callers.isArray())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: workstation callers takes [{\"aeTitle\": AE, \"host\": ADDRESS, NAME or *}, …]").arg(path));
        for (const QJsonValue &c : callers.toArray()) {
            const QString ae = c.toObject().value(QStringLiteral("aeTitle")).toString(), host = c.toObject().value(QStringLiteral("host")).toString().trimmed();
            if (!isValidAeTitle(ae) || host.isEmpty())
                return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: workstation callers: each is {\"aeTitle\": a valid AE title, \"host\": an address, a name or *}").arg(path));
            f.workstation.callers.append({ae, host});
        }
    }
    f.workstation.acceptAnyCaller = ws.value(QStringLiteral("acceptAnyCaller")).toBool(false);
    const QJsonArray stores = root.value(QStringLiteral("stores")).toArray();
    for (int i = 0; i < stores.size(); ++i) {
        const QString where = QStringLiteral("%1: stores[%2]").arg(path).arg(i);
        if (!stores.at(i).isObject())
            return Error(ErrorCode::InvalidArgument, where + QStringLiteral(": not an object"));
        Result<StoreConfig> c = StoreConfig::fromJson(stores.at(i).toObject(), where);
        if (!c.isOk())
            return c.error();
        if (f.find(c.value().name))
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: two stores are named '%2'").arg(where, c.value().name));
        f.m_stores << c.value();
    }
    if (root.contains(QStringLiteral("audit"))) {
        if (!root.value(QStringLiteral("audit")).isObject())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: audit takes {\"repository\": \"tls://HOST:6514\", …}").arg(path));
        Result<AuditConfig> audit = AuditConfig::fromJson(root.value(QStringLiteral("audit")).toObject(), path);
        if (!audit.isOk())
            return audit.error();
        f.audit = audit.value();
    }
    if (root.contains(QStringLiteral("signIn"))) {
        if (!root.value(QStringLiteral("signIn")).isObject())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: signIn takes {\"keep\": \"program\", \"idleMinutes\": 15}").arg(path));
        Result<SignInPolicy> policy = SignInPolicy::fromJson(root.value(QStringLiteral("signIn")).toObject(), path);
        if (!policy.isOk())
            return policy.error();
        f.signIn = policy.value();
    }
    return f;
}

QString WorkstationConfig::defaultAeTitle()
{
    static const QString title = [] {
        QString host = QSysInfo::machineHostName().section(QLatin1Char('.'), 0, 0).toUpper();
        for (QChar &c : host) {
            if (!(c.isLetterOrNumber() && c.unicode() < 128) && c != QLatin1Char('-'))
                c = QLatin1Char('_');
        }
        host = host.left(16);
        return isValidAeTitle(host) && !host.trimmed().isEmpty() ? host : QStringLiteral("SPECTRUM");
    }();
    return title;
}

QList<QPair<QString, QString>> WorkstationConfig::allowedCallers(const StoreConfigFile &config)
{
    QList<QPair<QString, QString>> out = config.workstation.callers;
    for (const StoreConfig &s : config.stores()) {
        if (const auto node = archiveKind(s.kind()).dicomNode(s); node && !out.contains(*node))
            out.append(*node);
    }
    return out;
}

QJsonObject StoreConfigFile::workstationJson(const WorkstationConfig &workstation)
{
    QJsonObject ws{{QStringLiteral("aeTitle"), workstation.aeTitle}, {QStringLiteral("storagePort"), workstation.storagePort}};
    if (!workstation.listenAddress.isEmpty())
        ws.insert(QStringLiteral("listenAddress"), workstation.listenAddress);
    if (!workstation.tlsCertificate.isEmpty()) {
        QJsonObject tls{{QStringLiteral("certificate"), workstation.tlsCertificate}, {QStringLiteral("key"), workstation.tlsKey}};
        if (!workstation.tlsClientCa.isEmpty())
            tls.insert(QStringLiteral("clientCa"), workstation.tlsClientCa);
        ws.insert(QStringLiteral("tls"), tls);
    }
    if (workstation.sharePort > 0) {
        QJsonObject share{{QStringLiteral("port"), workstation.sharePort}, {QStringLiteral("token"), workstation.shareToken.toJson()}};
        if (!workstation.shareAddress.isEmpty())
            share.insert(QStringLiteral("address"), workstation.shareAddress);
        if (workstation.sharePlain)
            share.insert(QStringLiteral("plain"), true);
        ws.insert(QStringLiteral("share"), share);
    }
    if (!workstation.callers.isEmpty()) {
        QJsonArray callers;
        for (const auto &[ae, host] : workstation.callers)
            callers.append(QJsonObject{{QStringLiteral("aeTitle"), ae}, {QStringLiteral("host"), host}});
        ws.insert(QStringLiteral("callers"), callers);
    }
    if (workstation.acceptAnyCaller)
        ws.insert(QStringLiteral("acceptAnyCaller"), true);
    return ws;
}

Error StoreConfigFile::save() const
{
    // What the system configuration says already is left to it: a later change there reaches this user.
    QJsonArray stores;
    for (const StoreConfig &s : m_stores) {
        const QJsonObject json = s.toJson();
        if (m_systemStores.value(s.name) != json)
            stores.append(json);
    }
    QJsonObject ws = workstationJson(workstation);
    for (auto it = m_systemWorkstation.begin(); it != m_systemWorkstation.end(); ++it) {
        if (ws.value(it.key()) == it.value())
            ws.remove(it.key());
    }
    QJsonObject root{{QStringLiteral("version"), 1}, {QStringLiteral("workstation"), ws}, {QStringLiteral("stores"), stores}};
    if (audit.isSet() && !audit.fromSystem)
        root.insert(QStringLiteral("audit"), audit.toJson());
    if (signIn.isSet() && !signIn.fromSystem)
        root.insert(QStringLiteral("signIn"), signIn.toJson());
    return writePrivately(m_path, QJsonDocument(root).toJson(QJsonDocument::Indented));
}

bool StoreConfigFile::isSystemStore(const QString &name) const
{
    const StoreConfig *s = find(name);
    return s && m_systemStores.value(name) == s->toJson();
}

Error StoreConfigFile::replace(const StoreConfig &store)
{
    if (Error e = store.validate(); e.isError())
        return e;
    for (StoreConfig &s : m_stores) {
        if (s.name == store.name) {
            s = store;
            return Error();
        }
    }
    return Error(ErrorCode::NotFound, QStringLiteral("no store named '%1'").arg(store.name));
}

const StoreConfig *StoreConfigFile::find(const QString &name) const
{
    for (const StoreConfig &s : m_stores) {
        if (s.name == name)
            return &s;
    }
    return nullptr;
}

Error StoreConfigFile::add(const StoreConfig &store)
{
    if (Error e = store.validate(); e.isError())
        return e;
    if (find(store.name))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("a store named '%1' exists already: edit it (spectrum-cli stores edit %1 …), or choose another name").arg(store.name));
    m_stores << store;
    return Error();
}

Error StoreConfigFile::remove(const QString &name)
{
    if (m_systemStores.contains(name)) {
        if (isSystemStore(name))
            return Error(ErrorCode::NotAllowed, QStringLiteral("'%1' is configured for every user in %2: it is removed there").arg(name, m_systemFile));
        // This user's version of it goes: the system's is theirs again (and follows its changes).
        Result<StoreConfig> system = StoreConfig::fromJson(m_systemStores.value(name), m_systemFile);
        if (!system.isOk())
            return system.error();
        for (StoreConfig &s : m_stores) {
            if (s.name == name)
                s = system.value();
        }
        return Error();
    }
    for (int i = 0; i < m_stores.size(); ++i) {
        if (m_stores[i].name == name) {
            m_stores.removeAt(i);
            return Error();
        }
    }
    return Error(ErrorCode::NotFound, QStringLiteral("no store named '%1'").arg(name));
}

QString StoreConfigFile::keyPath() const
{
    return QFileInfo(m_path).absolutePath() + QStringLiteral("/secret.key");
}

Result<QByteArray> StoreConfigFile::key(bool create) const
{
    QFile f(keyPath());
    if (f.exists()) {
        if (!f.open(QIODevice::ReadOnly))
            return Error(ErrorCode::Io, QStringLiteral("cannot read the secrets key %1: %2").arg(f.fileName(), f.errorString()));
        const QByteArray k = f.readAll();
        if (k.size() != kKeyBytes)
            return Error(ErrorCode::Corrupt, QStringLiteral("the secrets key %1 is damaged").arg(f.fileName()));
        return k;
    }
    if (!create)
        return Error(ErrorCode::NotFound, QStringLiteral("the secrets key %1 is missing: sealed secrets cannot be opened; add the store again").arg(f.fileName()));
    QByteArray k(kKeyBytes, Qt::Uninitialized);
    if (RAND_bytes(reinterpret_cast<unsigned char *>(k.data()), kKeyBytes) != 1)
        return Error(ErrorCode::Internal, QStringLiteral("no random bytes for a secrets key"));
    if (Error e = writePrivately(keyPath(), k); e.isError())
        return e;
    return k;
}

Result<Secret> StoreConfigFile::seal(const QString &secret) const
{
    Result<QByteArray> k = key(true);
    if (!k.isOk())
        return k.error();
    const QByteArray plain = secret.toUtf8();
    QByteArray nonce(kNonceBytes, Qt::Uninitialized);
    RAND_bytes(reinterpret_cast<unsigned char *>(nonce.data()), kNonceBytes);
    QByteArray out(plain.size() + kTagBytes, Qt::Uninitialized);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int len = 0, total = 0;
    bool ok = EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, reinterpret_cast<const unsigned char *>(k.value().constData()),
                                 reinterpret_cast<const unsigned char *>(nonce.constData())) == 1
        && EVP_EncryptUpdate(ctx, reinterpret_cast<unsigned char *>(out.data()), &len, reinterpret_cast<const unsigned char *>(plain.constData()), int(plain.size())) == 1;
    total = len;
    ok = ok && EVP_EncryptFinal_ex(ctx, reinterpret_cast<unsigned char *>(out.data()) + total, &len) == 1;
    total += len;
    ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, kTagBytes, out.data() + total) == 1;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok)
        return Error(ErrorCode::Internal, QStringLiteral("sealing a secret failed"));
    out.resize(total + kTagBytes);
    Secret s;
    s.source = Secret::Source::Sealed;
    s.value = kSealedPrefix + QString::fromLatin1((nonce + out).toBase64());
    return s;
}

Result<QString> StoreConfigFile::reveal(const Secret &secret) const
{
    switch (secret.source) {
    case Secret::Source::None:
        return QString();
    case Secret::Source::Env: {
        if (!qEnvironmentVariableIsSet(secret.value.toLocal8Bit().constData()))
            return Error(ErrorCode::NotFound, QStringLiteral("the environment variable %1 that holds the store's secret is not set").arg(secret.value));
        return qEnvironmentVariable(secret.value.toLocal8Bit().constData());
    }
    case Secret::Source::File: {
        QString file = secret.value;
        if (file.startsWith(QLatin1String("~/")))
            file = QDir::homePath() + file.mid(1);
        file.replace(QLatin1String("${HOME}"), QDir::homePath()).replace(QLatin1String("$HOME"), QDir::homePath());
        const QString user = qEnvironmentVariable("USER");
        if (!user.isEmpty())
            file.replace(QLatin1String("${USER}"), user).replace(QLatin1String("$USER"), user);
        // Missing, or open to others: said as such (not found, not allowed) — nothing was sent to the server, so
        // it is no "authentication failed".
        Result<QByteArray> bytes = readPrivateFile(file, QStringLiteral("the store's secret file"));
        if (!bytes.isOk())
            return bytes.error();
        return QString::fromUtf8(bytes.value()).trimmed();
    }
    case Secret::Source::Sealed: {
        if (!secret.value.startsWith(kSealedPrefix))
            return Error(ErrorCode::Corrupt, QStringLiteral("a sealed secret in an unknown format"));
        const QByteArray all = QByteArray::fromBase64(secret.value.mid(kSealedPrefix.size()).toLatin1());
        if (all.size() < kNonceBytes + kTagBytes)
            return Error(ErrorCode::Corrupt, QStringLiteral("a sealed secret is damaged"));
        Result<QByteArray> k = key(false);
        if (!k.isOk())
            return k.error();
        const QByteArray nonce = all.left(kNonceBytes), tag = all.right(kTagBytes);
        const QByteArray cipher = all.mid(kNonceBytes, all.size() - kNonceBytes - kTagBytes);
        QByteArray plain(cipher.size() + 16, Qt::Uninitialized);
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        int len = 0, total = 0;
        bool ok = EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, reinterpret_cast<const unsigned char *>(k.value().constData()),
                                     reinterpret_cast<const unsigned char *>(nonce.constData())) == 1
            && EVP_DecryptUpdate(ctx, reinterpret_cast<unsigned char *>(plain.data()), &len, reinterpret_cast<const unsigned char *>(cipher.constData()), int(cipher.size())) == 1;
        total = len;
        ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kTagBytes, const_cast<char *>(tag.constData())) == 1;
        ok = ok && EVP_DecryptFinal_ex(ctx, reinterpret_cast<unsigned char *>(plain.data()) + total, &len) == 1;
        total += len;
        EVP_CIPHER_CTX_free(ctx);
        if (!ok)
            return Error(ErrorCode::Corrupt, QStringLiteral("a sealed secret does not open with the key in %1 (another machine's key?)").arg(keyPath()));
        plain.resize(total);
        return QString::fromUtf8(plain);
    }
    }
    return QString();
}

} // namespace spectrum

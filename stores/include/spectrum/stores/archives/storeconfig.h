// SPDX-License-Identifier: Apache-2.0
#pragma once
// The stores a hospital has connected, as configured by its IT admins: one JSON file (documented in
// stores/STORES.md), validated with errors that name the store and the field.
//
// Where: --config FILE, else $SPECTRUM_CONFIG, else QStandardPaths' AppConfigLocation/stores.json
// (~/.config/spectrum/stores.json). The file is written atomically and readable by its owner only.
//
// Secrets (passwords, tokens) are never written in clear: a secret is either sealed (AES-256-GCM with a key in
// "secret.key" beside the file, also owner-only, made on first use), or a reference to a file or an environment
// variable that holds it. Sealing keeps secrets out of copies, backups and screenshots of the configuration;
// it does not protect against someone who can read both files as the same user (no keyring is assumed to
// exist on a reading-room machine).

#include "spectrum/core/error.h"
#include "spectrum/core/result.h"
#include "spectrum/stores/audit/auditconfig.h"
#include "spectrum/stores/signin/signinpolicy.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <variant>

namespace spectrum {

/// The kinds of store, each an ArchiveKind (archivekind.h) in stores/src/archives/<name>/ with its archive: adding
/// a protocol is that folder and its line here — KIND(enum value, its name in the configuration).
/// In the stores dialog's order.
#define SPECTRUM_STORE_KINDS(KIND) \
    KIND(DicomWeb, dicomweb)       \
    KIND(Dimse, dimse)             \
    KIND(Blobd, blobd)             \
    KIND(S3, s3)                   \
    KIND(Local, local)

enum class StoreKind {
#define SPECTRUM_STORE_KIND(kind, name) kind,
    SPECTRUM_STORE_KINDS(SPECTRUM_STORE_KIND)
#undef SPECTRUM_STORE_KIND
};
QString storeKindName(StoreKind kind);
Result<StoreKind> storeKindFromName(const QString &name);

/// Where a secret comes from.
struct Secret
{
    enum class Source { None, Sealed, File, Env };
    Source source = Source::None;
    QString value;  ///< the sealed text, the file path or the variable name — never the secret itself

    bool isSet() const { return source != Source::None; }
    QJsonValue toJson() const;
    static Result<Secret> fromJson(const QJsonValue &json, const QString &where);
};

/// A DICOMweb archive's settings (QIDO-RS, WADO-RS, STOW-RS).
struct DicomWebSettings
{
    QString url;             ///< e.g. https://pacs.example/dicom-web
    /// The other servers of the same archive (an Orthanc cluster: several servers over one database and one
    /// storage), same path and credentials. A study's series are fetched from all of them at once; one that stops
    /// answering leaves its series to the others, and searches go to the next.
    QStringList mirrors;
    QString auth = QStringLiteral("none");  ///< "none", "basic" (user + password), "bearer" (token) or "oidc" (sign-in)
    QString user;
    Secret password;
    Secret token;
    QString caFile;          ///< HTTPS: PEM certificates to trust besides the system's
    /// "oidc": the reader signs in to the hospital's identity provider (OpenID Connect, PKCE) and the store gets
    /// the sign-in's access token: the provider (issuer), this program's client there, and the API the token is for.
    QString issuer;
    QString clientId;
    QString audience;
};

/// A PACS over DICOM's network protocol (DIMSE).
struct DimseSettings
{
    QString host;
    int port = 0;
    QString aeTitle;         ///< the PACS's
    QString ourAeTitle;      ///< empty: the workstation's
    QString retrieve = QStringLiteral("get");  ///< "get" (C-GET) or "move" (C-MOVE to our Storage SCP)
    bool tls = false;        ///< associations over TLS (DICOM's BCP 195 profile)
    QString caFile;          ///< with tls: PEM certificates to trust besides the system's
};

/// A blob server (spectrum-blobd, or another workstation's shared cache).
struct BlobdSettings
{
    QString url;             ///< blob://HOST:PORT or blobs://HOST:PORT (TLS)
    Secret token;
    QString caFile;          ///< blobs://: PEM certificates to trust besides the system's
};

/// An S3-compatible object store.
struct S3Settings
{
    QString url;             ///< the store's http(s) endpoint
    QString bucket;
    QString prefix;          ///< keys start with it ("" or ending in '/'), e.g. "spectrum/"
    QString region = QStringLiteral("us-east-1");
    bool virtualHosted = false;  ///< BUCKET.HOST addressing (AWS's) instead of HOST/BUCKET (path style)
    /// "keys": the store's access key and secret key, kept here; "oidc": none kept — the reader signs in to the
    /// hospital's identity provider, and the store's security token service trades the sign-in's ID token for
    /// credentials of the reader's own that expire within the hour (AssumeRoleWithWebIdentity).
    QString auth = QStringLiteral("keys");
    QString accessKey;
    Secret secretKey;
    QString caFile;          ///< HTTPS: PEM certificates to trust besides the system's (the STS's and provider's too)
    /// "oidc": the identity provider, this program's client there, the API its access tokens are for (the same as a
    /// PACS's: one sign-in for both), the security token service (empty: the store's url — MinIO, SeaweedFS, Ceph
    /// RGW; https://sts.amazonaws.com for AWS) and the role to take (empty where the service picks it from the
    /// token's claims).
    QString issuer;
    QString clientId;
    QString audience;
    QString stsUrl;
    QString roleArn;
};

/// A folder of this workstation's (a FileStore), or the workstation's own cache.
struct LocalSettings
{
    QString path;            ///< a FileStore folder; empty: the workstation's cache
};

/// One kind's settings, in SPECTRUM_STORE_KINDS' order: the variant's index is the StoreKind.
using StoreSettings = std::variant<DicomWebSettings, DimseSettings, BlobdSettings, S3Settings, LocalSettings>;

/// A store: what every store has (its name and limits) and its kind's own settings — as Orthanc keeps typed
/// parameters per kind of remote. A record holds only its kind's fields.
struct StoreConfig
{
    StoreConfig() = default;
    StoreConfig(QString name, StoreSettings settings) : name(std::move(name)), settings(std::move(settings)) {}

    QString name;
    int maxParallel = 6;     ///< requests or associations at once
    int timeoutSeconds = 30;
    StoreSettings settings = LocalSettings();

    StoreKind kind() const { return StoreKind(settings.index()); }
    /// Its kind's settings; T must be its kind's (std::bad_variant_access otherwise: a programming error).
    template <typename T> T &as() { return std::get<T>(settings); }
    template <typename T> const T &as() const { return std::get<T>(settings); }
    /// Its kind's settings when they are T's, else null.
    template <typename T> const T *ifKind() const { return std::get_if<T>(&settings); }
    /// The PEM certificates it trusts besides the system's (its kind's caFile), empty when none or no such field.
    QString caFile() const;
    /// Its kind's secrets (passwords, tokens, keys), set or not.
    QList<const Secret *> secrets() const;

    /// The workstation's own cache (a local store without a folder): where fetches land, never searched or
    /// fetched from as an archive is. A local store with a folder is an archive like any other.
    bool isTheCache() const
    {
        const LocalSettings *local = ifKind<LocalSettings>();
        return local && local->path.isEmpty();
    }

    /// A clear error naming the store and field, or none.
    Error validate() const;
    QJsonObject toJson() const;
    static Result<StoreConfig> fromJson(const QJsonObject &json, const QString &where);
    /// "dicomweb https://pacs/dicom-web (basic, user)" — for lists; never a secret.
    QString summary() const;
};

class StoreConfigFile;

struct WorkstationConfig
{
    QString aeTitle = defaultAeTitle();            ///< our AE title, for DIMSE and the Storage SCP
    /// This machine's: its host name (up to the first dot, upper case, at most 16 characters) — a PACS tells a
    /// hundred workstations apart without each being configured; "SPECTRUM" when the name is unusable.
    static QString defaultAeTitle();
    int storagePort = 11112;                       ///< our Storage SCP
    /// "listenAddress": where the Storage SCP listens — an IPv4 address of this machine, or "any" (every address).
    /// Empty: the address this machine reaches its DIMSE stores from (listenaddress.h: chooseListenAddress).
    QString listenAddress;
    /// DICOM TLS ("tls": {"certificate", "key", "clientCa"}): the workstation's certificate and private key
    /// (PEM files). With them the Storage SCP accepts associations over TLS only, and DIMSE stores with "tls"
    /// present them to a PACS that asks for a client certificate. clientCa: the CA that callers of the Storage
    /// SCP must have a certificate from (empty: none is asked for).
    QString tlsCertificate;
    QString tlsKey;
    QString tlsClientCa;
    /// The cache shared read-only with the other workstations of the reading room ("share": {"port", "token"}): a
    /// blob server over this workstation's disk cache, on every address, TLS with the certificate above when there
    /// is one; the others add it as a blobd store (blob://HOST:PORT or blobs://). Port 0: not shared. The token is
    /// required of every client.
    int sharePort = 0;
    Secret shareToken;
    /// "share": {"address"}: the one address the share listens on (default: every address). "plain": true shares
    /// without TLS — only on a named address, the administrator's explicit choice; without it, a share with no
    /// certificate above is refused.
    QString shareAddress;
    bool sharePlain = false;
    /// Who may send to the Storage SCP ("callers": [{"aeTitle", "host"}], host an address, a name or "*"),
    /// besides the DIMSE stores configured (a PACS sends what it is asked to move); others are refused and logged.
    QList<QPair<QString, QString>> callers;
    /// "acceptAnyCaller": true — any AE title from anywhere: the administrator's explicit choice, never the default.
    bool acceptAnyCaller = false;

    /// The (AE title, host) pairs the Storage SCP takes associations from under `config`: the callers above and
    /// every DIMSE store.
    static QList<QPair<QString, QString>> allowedCallers(const StoreConfigFile &config);
};

class StoreConfigFile
{
public:
    /// --config's fallback: $SPECTRUM_CONFIG, else AppConfigLocation/stores.json.
    static QString defaultPath();
    /// The hospital's configuration every user's is merged over: $SPECTRUM_SYSTEM_CONFIG, else
    /// /etc/spectrum/stores.json.
    static QString systemPath();
    /// Reads `path` over the system configuration (systemPath(), when it exists): the user's workstation fields
    /// replace the system's one by one, a user's store replaces the system's of its name, the others are added.
    /// A missing file is an empty configuration, a malformed one an error naming the problem.
    static Result<StoreConfigFile> load(const QString &path);
    /// The same from the file's bytes (`path`: where they came from, for messages and saving).
    static Result<StoreConfigFile> parse(const QByteArray &json, const QString &path);

    QString path() const { return m_path; }
    /// Writes atomically, owner-only (0600) — only what differs from the system configuration.
    Error save() const;
    /// The system configuration this one was read over; empty when there was none.
    QString systemFile() const { return m_systemFile; }
    /// `name` comes from the system configuration unchanged (listing says so; it cannot be removed here).
    bool isSystemStore(const QString &name) const;
    /// Whether the system configuration has a store of this name that this user's file changes.
    bool overridesSystemStore(const QString &name) const { return m_systemStores.contains(name) && !isSystemStore(name); }

    const QList<StoreConfig> &stores() const { return m_stores; }
    const StoreConfig *find(const QString &name) const;
    /// Validates; an error if the name is taken.
    Error add(const StoreConfig &store);
    /// Replaces the store of `store.name` (validated); NotFound if there is none.
    Error replace(const StoreConfig &store);
    /// Forgets `name`; a store of the system configuration this user changed goes back to the system's version,
    /// one unchanged cannot be removed here (NotAllowed).
    Error remove(const QString &name);

    WorkstationConfig workstation;
    /// Where audit messages go ("audit"; auditconfig.h). The system configuration's wins over the user's.
    AuditConfig audit;
    /// How sign-ins are kept and when they end ("signIn"; signinpolicy.h). The hospital's wins over the user's: the
    /// system configuration's, and /etc/spectrum/stores.json's whenever it has one (wherever $SPECTRUM_SYSTEM_CONFIG
    /// points: a variable a user sets does not lift the hospital's policy).
    SignInPolicy signIn;

    /// Seals `secret` with the key beside the file (made, owner-only, on first use).
    Result<Secret> seal(const QString &secret) const;
    /// The secret's value: unsealed, read from its file (trimmed; "~/", $HOME and $USER in its path are this
    /// user's — one system file provisions every user's own) or from its variable.
    Result<QString> reveal(const Secret &secret) const;

private:
    /// load() but for the hospital's sign-in policy in /etc.
    static Result<StoreConfigFile> loadOverSystem(const QString &path);
    static QJsonObject workstationJson(const WorkstationConfig &workstation);
    QString keyPath() const;
    Result<QByteArray> key(bool create) const;

    QString m_path;
    QList<StoreConfig> m_stores;
    QString m_systemFile;
    QJsonObject m_systemWorkstation;       ///< the system's workstation fields, as save() writes them
    QHash<QString, QJsonObject> m_systemStores;  ///< the system's stores by name, as save() writes them
};

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::Secret)

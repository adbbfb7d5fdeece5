// SPDX-License-Identifier: Apache-2.0
// spectrum-cli stores: the store configuration — add, edit, list, test, remove a store; share the cache with the
// reading room; this workstation as the PACS see it.

#include "archivesupport.h"
#include "spectrum/stores/archives/archivekind.h"
#include "commands.h"
#include "output.h"

#include "spectrum/core/settings.h"
#include "spectrum/core/privatefile.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/exchange/listenaddress.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/exchange/workstationservice.h"
#include "spectrum/transfer/dimse.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QHostAddress>
#include <QNetworkInterface>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSocketNotifier>
#include <QTextStream>

#include <csignal>
#include <cstdio>
#include <sys/socket.h>
#include <unistd.h>

namespace spectrum::cli {

namespace {

Result<QString> readSecretFile(const QString &path)
{
    Result<QByteArray> bytes = readPrivateFile(path, QStringLiteral("the secret file"));
    if (!bytes.isOk())
        return bytes.error();
    const QString secret = QString::fromUtf8(bytes.value()).trimmed();
    if (secret.isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1 is empty").arg(path));
    return secret;
}

/// The secret in `path`, sealed with the configuration's key.
Result<Secret> sealFromFile(const StoreConfigFile &config, const QString &path)
{
    Result<QString> secret = readSecretFile(path);
    if (!secret.isOk())
        return secret.error();
    return config.seal(secret.value());
}

namespace {

/// The kinds of store, as the configuration names them ("dicomweb, dimse, … or local").
QString kindNames(const QString &separator)
{
    QStringList names;
    for (const ArchiveKind *k : archiveKinds())
        names << k->name();
    if (separator == QLatin1String("|"))
        return names.join(separator);
    const QString last = names.takeLast();
    return names.join(separator) + QStringLiteral(" or ") + last;
}

QList<QCommandLineOption> storeOptions()
{
    return {
        {QStringLiteral("kind"), kindNames(QStringLiteral(", ")) + QLatin1Char('.'), QStringLiteral("KIND")},
        {QStringLiteral("url"), QStringLiteral("dicomweb: http(s)://HOST/dicom-web; blobd: blob://HOST:PORT or blobs://…; s3: http(s)://HOST[:PORT]"), QStringLiteral("URL")},
        {QStringLiteral("mirror"), QStringLiteral("dicomweb: another server of the same archive (an Orthanc cluster), same path and credentials; repeat for more."), QStringLiteral("URL")},
        {QStringLiteral("bucket"), QStringLiteral("s3: the bucket."), QStringLiteral("BUCKET")},
        {QStringLiteral("prefix"), QStringLiteral("s3: keys start with it, e.g. spectrum/ (default: none)."), QStringLiteral("PREFIX")},
        {QStringLiteral("region"), QStringLiteral("s3: the bucket's region (default us-east-1)."), QStringLiteral("REGION")},
        {QStringLiteral("virtual-host"), QStringLiteral("s3: address the bucket as BUCKET.HOST (AWS's default) instead of HOST/BUCKET.")},
        {QStringLiteral("access-key"), QStringLiteral("s3: the access key ID (with --secret-key-file)."), QStringLiteral("ID")},
        {QStringLiteral("secret-key-file"), QStringLiteral("s3: file holding the secret access key (sealed into the configuration)."), QStringLiteral("FILE")},
        {QStringLiteral("user"), QStringLiteral("dicomweb: HTTP Basic user (with --password-file)."), QStringLiteral("USER")},
        {QStringLiteral("password-file"), QStringLiteral("dicomweb: file holding the password (readable by its owner only)."), QStringLiteral("FILE")},
        {QStringLiteral("token-file"), QStringLiteral("dicomweb (Bearer) or blobd: file holding the token (readable by its owner only)."), QStringLiteral("FILE")},
        {QStringLiteral("token-ref"), QStringLiteral("Keep a reference to the token file instead of sealing it (for tokens renewed outside Spectrum)."), QString()},
        {QStringLiteral("issuer"), QStringLiteral("dicomweb, s3: readers sign in to this identity provider (OpenID Connect, https://…; spectrum-cli login); "
                                                  "an s3 store then trades the sign-in for credentials of the reader's own at its security token service."), QStringLiteral("URL")},
        {QStringLiteral("client-id"), QStringLiteral("dicomweb, s3, with --issuer: Spectrum's client ID at the identity provider (a public client, PKCE)."), QStringLiteral("ID")},
        {QStringLiteral("audience"), QStringLiteral("dicomweb, s3, with --issuer: the API the access token is for (the PACS, as the provider names it)."), QStringLiteral("AUD")},
        {QStringLiteral("sts-url"), QStringLiteral("s3, with --issuer: the security token service (default: the store's url; AWS: https://sts.amazonaws.com)."), QStringLiteral("URL")},
        {QStringLiteral("role-arn"), QStringLiteral("s3, with --issuer: the role readers take (arn:aws:iam::…:role/…; not needed where the service picks it)."), QStringLiteral("ARN")},
        {QStringLiteral("ca-file"), QStringLiteral("HTTPS / blobs:// / dimse --tls: PEM certificates to trust."), QStringLiteral("FILE")},
        {QStringLiteral("tls"), QStringLiteral("dimse: associations over TLS (BCP 195); the PACS's certificate is verified (--ca-file).")},
        {QStringLiteral("host"), QStringLiteral("dimse: the PACS's host."), QStringLiteral("HOST")},
        {QStringLiteral("port"), QStringLiteral("dimse: the PACS's port."), QStringLiteral("PORT")},
        {QStringLiteral("aet"), QStringLiteral("dimse: the PACS's AE title."), QStringLiteral("AET")},
        {QStringLiteral("our-aet"), QStringLiteral("dimse: our AE title towards it (default: the workstation's)."), QStringLiteral("AET")},
        {QStringLiteral("retrieve"), QStringLiteral("dimse: get (C-GET, default) or move (C-MOVE to our Storage SCP)."), QStringLiteral("get|move")},
        {QStringLiteral("path"), QStringLiteral("local: a cache folder (default: the workstation's)."), QStringLiteral("DIR")},
        {QStringLiteral("max-parallel"), QStringLiteral("Requests at once (default 6)."), QStringLiteral("N")},
        {QStringLiteral("timeout"), QStringLiteral("Seconds (default 30)."), QStringLiteral("S")},
    };
}

/// The options given on `p` applied to `s` (a new store, or one being edited: only what is given changes), each
/// through the store's kind (archivekind.h): an option that is none of its fields is an error.
Error applyStoreOptions(const QCommandLineParser &p, const StoreConfigFile &config, StoreConfig &s)
{
    const ArchiveKind &kind = archiveKind(s.kind());
    auto given = [&p](const char *name) { return p.isSet(QLatin1String(name)); };
    auto value = [&p](const char *name) { return p.value(QLatin1String(name)); };
    Error error;
    auto set = [&](const char *option, StoreField field, const QVariant &v) {
        if (!error.isError() && !kind.setValue(s, field, v))
            error = Error(ErrorCode::InvalidArgument, QStringLiteral("--%1 is not an option of a %2 store").arg(QLatin1String(option), kind.name()));
    };
    const std::pair<const char *, StoreField> texts[] = {
        {"url", StoreField::Url},       {"ca-file", StoreField::CaFile}, {"host", StoreField::Host},     {"aet", StoreField::AeTitle},
        {"our-aet", StoreField::OurAeTitle}, {"path", StoreField::Path}, {"bucket", StoreField::Bucket}, {"prefix", StoreField::Prefix},
        {"region", StoreField::Region}, {"access-key", StoreField::AccessKey}, {"retrieve", StoreField::Retrieve},
        {"issuer", StoreField::Issuer}, {"client-id", StoreField::ClientId}, {"audience", StoreField::Audience},
        {"sts-url", StoreField::StsUrl}, {"role-arn", StoreField::RoleArn}};
    for (const auto &[option, field] : texts)
        if (given(option))
            set(option, field, value(option));
    const std::pair<const char *, StoreField> numbers[] = {{"port", StoreField::Port}, {"max-parallel", StoreField::MaxParallel}, {"timeout", StoreField::Timeout}};
    for (const auto &[option, field] : numbers)
        if (given(option))
            set(option, field, value(option).toInt());  // not a number: 0, which the store's check refuses
    const std::pair<const char *, StoreField> flags[] = {{"tls", StoreField::Tls}, {"virtual-host", StoreField::Addressing}};
    for (const auto &[option, field] : flags)
        if (given(option))
            set(option, field, true);
    if (given("mirror"))
        set("mirror", StoreField::Mirrors, p.values(QStringLiteral("mirror")));
    if (given("secret-key-file") && !error.isError()) {
        Result<Secret> sealed = sealFromFile(config, value("secret-key-file"));
        if (!sealed.isOk())
            return sealed.error();
        set("secret-key-file", StoreField::SecretKey, QVariant::fromValue(sealed.value()));
    }
    if (given("password-file") && !error.isError()) {
        Result<Secret> sealed = sealFromFile(config, value("password-file"));
        if (!sealed.isOk())
            return sealed.error();
        set("password-file", StoreField::Password, QVariant::fromValue(sealed.value()));
        kind.setValue(s, StoreField::Token, QVariant::fromValue(Secret()));  // basic now: no token left behind
        if (given("user"))
            set("user", StoreField::User, value("user"));
        if (!error.isError() && kind.value(s, StoreField::User).toString().isEmpty())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("--password-file needs --user"));
        set("password-file", StoreField::Auth, QStringLiteral("basic"));
    } else if (given("user") && !error.isError()) {
        // A kind without a user refuses it as any other option it lacks.
        if (kind.fields().contains(StoreField::User) && !kind.value(s, StoreField::Password).value<Secret>().isSet())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("--user needs --password-file"));
        set("user", StoreField::User, value("user"));
    }
    if (given("issuer") && (given("token-file") || given("password-file") || given("access-key") || given("secret-key-file")))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("--issuer (the reader signs in) goes with no --token-file, --password-file, --access-key "
                                                                "or --secret-key-file"));
    if (given("issuer") && !error.isError() && kind.fields().contains(StoreField::Issuer)) {
        // A sign-in now: no password, token or key left behind.
        set("issuer", StoreField::Auth, QStringLiteral("oidc"));
        kind.setValue(s, StoreField::Password, QVariant::fromValue(Secret()));
        kind.setValue(s, StoreField::Token, QVariant::fromValue(Secret()));
        kind.setValue(s, StoreField::AccessKey, QString());
        kind.setValue(s, StoreField::SecretKey, QVariant::fromValue(Secret()));
    } else if ((given("access-key") || given("secret-key-file")) && (given("client-id") || given("audience") || given("sts-url") || given("role-arn"))) {
        return Error(ErrorCode::InvalidArgument, QStringLiteral("--client-id, --audience, --sts-url and --role-arn go with --issuer (the reader signs in), "
                                                                "not with an access key"));
    } else if ((given("access-key") || given("secret-key-file")) && !error.isError() && kind.fields().contains(StoreField::SecretKey)) {
        set("access-key", StoreField::Auth, QStringLiteral("keys"));  // keys now: the sign-in's settings go
        for (StoreField f : {StoreField::Issuer, StoreField::ClientId, StoreField::Audience, StoreField::StsUrl, StoreField::RoleArn})
            kind.setValue(s, f, QString());
    }
    if ((given("sts-url") || given("role-arn")) && !error.isError() && kind.value(s, StoreField::Auth).toString() != QLatin1String("oidc"))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("--sts-url and --role-arn are for a store whose readers sign in (--issuer)"));
    if (given("token-file") && !error.isError()) {
        Secret token;
        if (given("token-ref")) {
            if (Error e = checkPrivateFile(value("token-file"), QStringLiteral("the token file")); e.isError())
                return e;
            token.source = Secret::Source::File;
            token.value = QFileInfo(value("token-file")).absoluteFilePath();
        } else {
            Result<Secret> sealed = sealFromFile(config, value("token-file"));
            if (!sealed.isOk())
                return sealed.error();
            token = sealed.value();
        }
        set("token-file", StoreField::Token, QVariant::fromValue(token));
        if (kind.fields().contains(StoreField::Auth)) {
            set("token-file", StoreField::Auth, QStringLiteral("bearer"));  // a token is how it authenticates
            kind.setValue(s, StoreField::Password, QVariant::fromValue(Secret()));  // no password left behind
        }
    }
    return error;
}

} // namespace

int cmdStoresAdd(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Adds a store. Secrets are read from files and sealed into the configuration, never kept in clear."));
    p.addHelpOption();
    addConfigOption(p);
    p.addPositionalArgument(QStringLiteral("name"), QStringLiteral("A name for the store (letters, digits, . _ -)."));
    p.addOptions(storeOptions());
    processArguments(p, args);
    if (p.positionalArguments().size() != 1)
        return fail(QStringLiteral("stores add: name the store"), 2);
    Result<StoreConfigFile> config = loadConfig(p);
    if (!config.isOk())
        return fail(config.error().toString());
    Result<StoreKind> kind = storeKindFromName(p.value(QStringLiteral("kind")));
    if (!kind.isOk())
        return fail(QStringLiteral("stores add: --kind: %1").arg(kind.error().message()), 2);
    StoreConfig s(p.positionalArguments().first(), archiveKind(kind.value()).defaults());
    if (Error e = applyStoreOptions(p, config.value(), s); e.isError())
        return fail(QStringLiteral("stores add: %1").arg(e.message()), e.code() == ErrorCode::InvalidArgument ? 2 : 1);
    if (Error e = config.value().add(s); e.isError())
        return fail(e.toString(), 2);
    if (Error e = config.value().save(); e.isError())
        return fail(e.toString());
    out(QStringLiteral("added %1: %2 → %3").arg(s.name, s.summary(), config.value().path()));
    return 0;
}

int cmdStoresEdit(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Changes a store: only the options given change (a new --password-file when the password "
                                               "changed, another --url…). A store of the system configuration is changed for this user."));
    p.addHelpOption();
    addConfigOption(p);
    p.addPositionalArgument(QStringLiteral("name"), QStringLiteral("The store."));
    p.addOptions(storeOptions());
    processArguments(p, args);
    if (p.positionalArguments().size() != 1)
        return fail(QStringLiteral("stores edit: name the store"), 2);
    if (p.isSet(QStringLiteral("kind")))
        return fail(QStringLiteral("stores edit: a store's kind does not change (remove it and add it again)"), 2);
    Result<StoreConfigFile> config = loadConfig(p);
    if (!config.isOk())
        return fail(config.error().toString());
    const StoreConfig *found = config.value().find(p.positionalArguments().first());
    if (!found)
        return fail(QStringLiteral("stores edit: no store named '%1' in %2").arg(p.positionalArguments().first(), config.value().path()), 2);
    StoreConfig s = *found;
    if (Error e = applyStoreOptions(p, config.value(), s); e.isError())
        return fail(QStringLiteral("stores edit: %1").arg(e.message()), e.code() == ErrorCode::InvalidArgument ? 2 : 1);
    if (Error e = config.value().replace(s); e.isError())
        return fail(e.toString(), 2);
    if (Error e = config.value().save(); e.isError())
        return fail(e.toString());
    out(QStringLiteral("changed %1: %2 → %3").arg(s.name, s.summary(), config.value().path()));
    return 0;
}

int cmdStoresWorkstation(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("This workstation as the PACS see it: its AE title, the Storage SCP's port and address. "
                                               "Without options: what they are. A running workstation follows the change."));
    p.addHelpOption();
    addConfigOption(p);
    p.addOptions({
        {QStringLiteral("aet"), QStringLiteral("Our AE title (default: this machine's host name)."), QStringLiteral("AET")},
        {QStringLiteral("port"), QStringLiteral("The Storage SCP's port."), QStringLiteral("PORT")},
        {QStringLiteral("listen-address"), QStringLiteral("An IPv4 address of this machine, 'any', or 'auto' (where the PACS are reached from)."), QStringLiteral("ADDRESS")},
    });
    processArguments(p, args);
    Result<StoreConfigFile> config = loadConfig(p);
    if (!config.isOk())
        return fail(config.error().toString());
    WorkstationConfig &ws = config.value().workstation;
    const bool change = p.isSet(QStringLiteral("aet")) || p.isSet(QStringLiteral("port")) || p.isSet(QStringLiteral("listen-address"));
    if (p.isSet(QStringLiteral("aet"))) {
        if (!isValidAeTitle(p.value(QStringLiteral("aet"))))
            return fail(QStringLiteral("stores workstation: '%1' is not an AE title (1-16 characters, no backslash)").arg(p.value(QStringLiteral("aet"))), 2);
        ws.aeTitle = p.value(QStringLiteral("aet"));
    }
    if (p.isSet(QStringLiteral("port"))) {
        bool ok = false;
        const int port = p.value(QStringLiteral("port")).toInt(&ok);
        if (!ok || port < 1 || port > 65535)
            return fail(QStringLiteral("stores workstation: --port takes 1-65535"), 2);
        ws.storagePort = port;
    }
    if (p.isSet(QStringLiteral("listen-address"))) {
        const QString a = p.value(QStringLiteral("listen-address")).trimmed();
        if (a != QLatin1String("any") && a != QLatin1String("auto") && QHostAddress(a).protocol() != QAbstractSocket::IPv4Protocol)
            return fail(QStringLiteral("stores workstation: --listen-address takes an IPv4 address, 'any' or 'auto'"), 2);
        ws.listenAddress = a == QLatin1String("auto") ? QString() : a;
    }
    if (change) {
        if (Error e = config.value().save(); e.isError())
            return fail(e.toString());
    }
    const ListenAddress where = chooseListenAddress(config.value());
    out(QStringLiteral("AE title %1, port %2, listening on %3 (%4)").arg(ws.aeTitle).arg(ws.storagePort).arg(where.shown(), where.why));
    return 0;
}

int cmdStoresList(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Lists the configured stores."));
    p.addHelpOption();
    addConfigOption(p);
    processArguments(p, args);
    Result<StoreConfigFile> config = loadConfig(p);
    if (!config.isOk())
        return fail(config.error().toString());
    if (config.value().stores().isEmpty())
        std::fprintf(stderr, "no stores in %s (spectrum-cli stores add NAME --kind …)\n", qPrintable(config.value().path()));
    for (const StoreConfig &s : config.value().stores()) {
        const QString origin = config.value().isSystemStore(s.name)          ? QStringLiteral(" (system: %1)").arg(config.value().systemFile())
                               : config.value().overridesSystemStore(s.name) ? QStringLiteral(" (this user's version of %1's; `stores remove %2` goes back to it)")
                                                                                   .arg(config.value().systemFile(), s.name)
                                                                             : QString();
        out(QStringLiteral("%1\t%2%3").arg(s.name, s.summary(), origin));
    }
    return 0;
}

int cmdStoresTest(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Tests the connection to a store (all when none is named): C-ECHO, a QIDO request, a blobd listing."));
    p.addHelpOption();
    addConfigOption(p);
    p.addPositionalArgument(QStringLiteral("name"), QStringLiteral("The store."), QStringLiteral("[NAME]"));
    processArguments(p, args);
    Result<StoreConfigFile> config = loadConfig(p);
    if (!config.isOk())
        return fail(config.error().toString());
    QStringList names = p.positionalArguments();
    if (names.isEmpty()) {
        for (const StoreConfig &s : config.value().stores())
            names << s.name;
    }
    bool local = false;
    for (const QString &n : names) {
        const StoreConfig *s = config.value().find(n);
        local = local || (s && s->isTheCache());
    }
    Result<std::unique_ptr<StoreRegistry>> reg = registry(config.value(), local);
    if (!reg.isOk())
        return fail(reg.error().toString());
    int failures = 0;
    for (const QString &n : names) {
        QElapsedTimer t;
        t.start();
        const Error e = runSync(reg.value()->test(n)).error();
        if (e.isError())
            ++failures;
        out(QStringLiteral("%1\t%2").arg(n, e.isError() ? QStringLiteral("FAILED: %1").arg(e.toString()) : QStringLiteral("ok (%1 ms)").arg(t.elapsed())));
    }
    return failures == 0 ? 0 : 1;
}

int cmdStoresRemove(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Removes a store from the configuration."));
    p.addHelpOption();
    addConfigOption(p);
    p.addPositionalArgument(QStringLiteral("name"), QStringLiteral("The store."));
    processArguments(p, args);
    if (p.positionalArguments().size() != 1)
        return fail(QStringLiteral("stores remove: name the store"), 2);
    Result<StoreConfigFile> config = loadConfig(p);
    if (!config.isOk())
        return fail(config.error().toString());
    if (Error e = config.value().remove(p.positionalArguments().first()); e.isError())
        return fail(e.toString());
    if (Error e = config.value().save(); e.isError())
        return fail(e.toString());
    const QString name = p.positionalArguments().first();
    out(config.value().isSystemStore(name) ? QStringLiteral("%1: back to the system configuration's (%2)").arg(name, config.value().systemFile())
                                           : QStringLiteral("removed %1").arg(name));
    return 0;
}

int cmdStoresShare(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Shares this workstation's disk cache read-only with the other workstations of its reading room: while it runs, "
        "a blob server over its cache answers them (they add it with: stores add NAME --kind blobd --url blob://THIS-HOST:PORT "
        "--token-file FILE). Over TLS (blobs://) when the workstation has a certificate (its \"tls\" in the configuration)."));
    p.addHelpOption();
    addConfigOption(p);
    p.addOption({QStringLiteral("port"), QStringLiteral("The port to serve on."), QStringLiteral("N")});
    p.addOption({QStringLiteral("token-file"), QStringLiteral("A file holding the token the others must present (sealed into the configuration)."), QStringLiteral("FILE")});
    p.addOption({QStringLiteral("address"), QStringLiteral("Serve on this one address of the machine only (default: every address)."), QStringLiteral("ADDRESS")});
    p.addOption({QStringLiteral("plain"), QStringLiteral("Share without TLS (the workstation has no certificate): allowed only with --address, on a "
                                                         "network only the reading room reaches — the token and images cross it readable.")});
    p.addOption({QStringLiteral("off"), QStringLiteral("Stop sharing.")});
    processArguments(p, args);
    Result<StoreConfigFile> config = loadConfig(p);
    if (!config.isOk())
        return fail(config.error().toString());
    if (p.isSet(QStringLiteral("off"))) {
        config.value().workstation.sharePort = 0;
        config.value().workstation.shareToken = Secret();
        if (Error e = config.value().save(); e.isError())
            return fail(e.toString());
        out(QStringLiteral("the cache is not shared"));
        return 0;
    }
    bool ok = false;
    const int port = p.value(QStringLiteral("port")).toInt(&ok);
    if (!ok || port < 1 || port > 65535 || !p.isSet(QStringLiteral("token-file")))
        return fail(QStringLiteral("stores share: --port 1-65535 and --token-file FILE (or --off)"), 2);
    Result<Secret> sealed = sealFromFile(config.value(), p.value(QStringLiteral("token-file")));
    if (!sealed.isOk())
        return fail(sealed.error().toString());
    const QString address = p.value(QStringLiteral("address")).trimmed();
    if (!address.isEmpty() && QHostAddress(address).isNull())
        return fail(QStringLiteral("stores share: --address '%1' is not an address").arg(address), 2);
    if (!address.isEmpty() && !QNetworkInterface::allAddresses().contains(QHostAddress(address))
        && QHostAddress(address) != QHostAddress(QHostAddress::AnyIPv4) && QHostAddress(address) != QHostAddress(QHostAddress::AnyIPv6))
        return fail(QStringLiteral("stores share: %1 is not an address of this machine").arg(address), 2);
    const bool everyAddress = address.isEmpty() || QHostAddress(address) == QHostAddress(QHostAddress::AnyIPv4)
                           || QHostAddress(address) == QHostAddress(QHostAddress::AnyIPv6);
    const bool tls = !config.value().workstation.tlsCertificate.isEmpty();
    if (!tls && !(p.isSet(QStringLiteral("plain")) && !everyAddress))
        return fail(QStringLiteral("stores share: this workstation has no TLS certificate (the configuration's workstation \"tls\"): the cache is "
                                   "shared without TLS only with --plain and --address, one address of a network only the reading room reaches"), 2);
    config.value().workstation.sharePort = port;
    config.value().workstation.shareToken = sealed.value();
    config.value().workstation.shareAddress = address;
    config.value().workstation.sharePlain = !tls && p.isSet(QStringLiteral("plain"));
    if (Error e = config.value().save(); e.isError())
        return fail(e.toString());
    out(QStringLiteral("the cache is shared read-only on %1 port %2%3 while the workstation runs")
            .arg(address.isEmpty() ? QStringLiteral("every address") : address).arg(port).arg(tls ? QStringLiteral(" (TLS: blobs://)") : QStringLiteral(" (plain: blob://)")));
    return 0;
}


} // namespace

int cmdStores(const QStringList &args)
{
    const QString sub = args.value(1);
    QStringList rest = args;
    if (rest.size() > 1)
        rest.removeAt(1);
    rest[0] = args[0] + QLatin1Char(' ') + sub;
    if (sub == QLatin1String("add")) return cmdStoresAdd(rest);
    if (sub == QLatin1String("list")) return cmdStoresList(rest);
    if (sub == QLatin1String("test")) return cmdStoresTest(rest);
    if (sub == QLatin1String("remove")) return cmdStoresRemove(rest);
    if (sub == QLatin1String("share")) return cmdStoresShare(rest);
    if (sub == QLatin1String("edit")) return cmdStoresEdit(rest);
    if (sub == QLatin1String("workstation")) return cmdStoresWorkstation(rest);
    const bool asked = sub == QLatin1String("--help") || sub == QLatin1String("-h");
    std::fprintf(asked ? stdout : stderr,
                 "Usage: spectrum-cli stores add|edit|list|test|remove|share|workstation [options]\n"
                 "The archives this workstation reads from and sends to (the store configuration, stores.json).\n"
                 "  add NAME --kind %s …   add one (add --help: every option)\n"
                 "  edit NAME --password-file F …                  change what is given (edit --help: every option)\n"
                 "  list                                           the stores, secrets never shown\n"
                 "  test [NAME]                                    C-ECHO, a QIDO request or a blobd listing: ok, or why not\n"
                 "  remove NAME                                    forget one\n"
                 "  share --port N --token-file F | --off          this workstation's cache, read-only, to its reading room\n"
                 "  workstation [--aet A] [--port P] [--listen-address IP|any|auto]   this workstation as the PACS see it\n",
                 qPrintable(kindNames(QStringLiteral("|"))));
    return asked ? 0 : 2;
}


QList<Command> storeCommands()
{
    return {
        {"stores", "add|edit|list|test|remove|share|workstation", "the configured archives (dicomweb, dimse, blobd, s3, local)", cmdStores, false},
    };
}

} // namespace spectrum::cli

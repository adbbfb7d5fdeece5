// SPDX-License-Identifier: Apache-2.0
// The archive kinds, one for each line of SPECTRUM_STORE_KINDS (storeconfig.h): the one place a kind is known by
// its enum value and its name.
#include "spectrum/stores/archives/archivekind.h"

#include "archives/kindsupport.h"

#include <QUrl>

#define SPECTRUM_DECLARE_KIND(kind, name) const spectrum::ArchiveKind &make##kind##Kind();
SPECTRUM_STORE_KINDS(SPECTRUM_DECLARE_KIND)
#undef SPECTRUM_DECLARE_KIND

namespace spectrum {

namespace {

const QList<const ArchiveKind *> &table()
{
    static const QList<const ArchiveKind *> kinds = {
#define SPECTRUM_REGISTER_KIND(kind, name) &make##kind##Kind(),
        SPECTRUM_STORE_KINDS(SPECTRUM_REGISTER_KIND)
#undef SPECTRUM_REGISTER_KIND
    };
    return kinds;
}

} // namespace

QString storeKindName(StoreKind kind)
{
    static const QStringList names = {
#define SPECTRUM_KIND_NAME(kind, name) QStringLiteral(#name),
        SPECTRUM_STORE_KINDS(SPECTRUM_KIND_NAME)
#undef SPECTRUM_KIND_NAME
    };
    return names.value(int(kind));
}

Result<StoreKind> storeKindFromName(const QString &name)
{
    QStringList names;
    for (const ArchiveKind *k : table()) {
        if (k->name() == name)
            return k->kind();
        names << k->name();
    }
    const QString last = names.takeLast();
    return Error(ErrorCode::InvalidArgument, QStringLiteral("unknown store kind '%1' (%2 or %3)").arg(name, names.join(QStringLiteral(", ")), last));
}

const ArchiveKind &archiveKind(StoreKind kind)
{
    return *table().at(int(kind));
}

QList<const ArchiveKind *> archiveKinds()
{
    return table();
}

StoreConfig ArchiveKind::withOnlyItsFields(const StoreConfig &store) const
{
    const QList<StoreField> has = fields();
    const StoreConfig none;
    StoreConfig s = store;
    auto keep = [&](StoreField f, auto StoreConfig::*member) {
        if (!has.contains(f))
            s.*member = none.*member;
    };
    keep(StoreField::Url, &StoreConfig::url);
    keep(StoreField::Mirrors, &StoreConfig::mirrors);
    keep(StoreField::Auth, &StoreConfig::auth);
    keep(StoreField::User, &StoreConfig::user);
    keep(StoreField::Password, &StoreConfig::password);
    keep(StoreField::Token, &StoreConfig::token);
    keep(StoreField::CaFile, &StoreConfig::caFile);
    keep(StoreField::Host, &StoreConfig::host);
    keep(StoreField::Port, &StoreConfig::port);
    keep(StoreField::AeTitle, &StoreConfig::aeTitle);
    keep(StoreField::OurAeTitle, &StoreConfig::ourAeTitle);
    keep(StoreField::Retrieve, &StoreConfig::retrieve);
    keep(StoreField::Tls, &StoreConfig::tls);
    keep(StoreField::Bucket, &StoreConfig::bucket);
    keep(StoreField::Prefix, &StoreConfig::prefix);
    keep(StoreField::Region, &StoreConfig::region);
    keep(StoreField::Addressing, &StoreConfig::virtualHosted);
    keep(StoreField::AccessKey, &StoreConfig::accessKey);
    keep(StoreField::SecretKey, &StoreConfig::secretKey);
    keep(StoreField::Path, &StoreConfig::path);
    return s;
}

namespace kinds {

bool isWebAddress(const QString &url)
{
    const QUrl u(url, QUrl::StrictMode);
    return u.isValid() && (u.scheme() == QLatin1String("http") || u.scheme() == QLatin1String("https")) && !u.host().isEmpty() && u.userInfo().isEmpty();
}

} // namespace kinds

} // namespace spectrum

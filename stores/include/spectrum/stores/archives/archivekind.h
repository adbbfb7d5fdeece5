// SPDX-License-Identifier: Apache-2.0
#pragma once
// ArchiveKind: all that differs between kinds of store (local, blobd, DICOMweb, DIMSE, S3), in one class per kind
// beside its archive (stores/src/archives/<kind>/): the fields it is configured with, their check, how it is summed
// up in a list, whether it is a DICOM node that sends to this workstation, and the archive it makes. The stores
// dialog shows a kind's fields, the configuration checks and writes what its kind says, the registry makes archives
// through it. StoreKind is named only in the table (SPECTRUM_STORE_KINDS) and the kinds themselves.

#include "spectrum/stores/archives/storeconfig.h"

#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QSet>
#include <QString>
#include <QVariant>

#include <functional>
#include <memory>
#include <optional>

namespace spectrum {

class Archive;
class FileStore;

/// A field of a store's configuration beyond its name and kind (STORES.md names each).
enum class StoreField {
    Url, Mirrors, Auth, User, Password, Token, CaFile,                 // web, blob servers
    Issuer, ClientId, Audience,                                         // web: OpenID Connect
    Host, Port, AeTitle, OurAeTitle, Retrieve, Tls,                     // DIMSE
    Bucket, Prefix, Region, Addressing, AccessKey, SecretKey,           // S3
    StsUrl, RoleArn,                                                    // S3: OpenID Connect through an STS
    Path,                                                               // local
    MaxParallel, Timeout,                                               // limits
};

class ArchiveKind
{
public:
    virtual ~ArchiveKind() = default;

    virtual StoreKind kind() const = 0;
    /// Its name in the configuration ("dicomweb").
    QString name() const { return storeKindName(kind()); }
    /// Reads and writes one of its own fields in a store of its kind (see value()).
    struct FieldAccess
    {
        StoreField field;
        std::function<QVariant(const StoreSettings &)> get;
        std::function<void(StoreSettings &, const QVariant &)> set;
    };
    /// Its own fields (not the limits), in the order the stores dialog shows them.
    virtual QList<FieldAccess> access() const = 0;
    /// The limits it uses (MaxParallel, Timeout), after its own fields; the stores dialog shows MaxParallel where it
    /// is one of them, and Timeout always. Every store has both (value() and setValue() take them for any kind).
    virtual QList<StoreField> limits() const { return {StoreField::MaxParallel, StoreField::Timeout}; }
    /// The fields it is configured with, in the order the stores dialog shows them: its own, then the limits.
    QList<StoreField> fields() const;
    /// One of the fields of `store` (a store of this kind), as the stores dialog and the command line handle it:
    /// text as a QString, Mirrors a QStringList, Port, MaxParallel and Timeout an int, Tls and Addressing (virtual
    /// hosts) a bool, secrets a Secret. Invalid when it has no such field (MaxParallel and Timeout every store has).
    QVariant value(const StoreConfig &store, StoreField field) const;
    /// Sets one of the fields of `store` (a store of this kind) from a value of the type value() gives; false when
    /// it has no such field.
    bool setValue(StoreConfig &store, StoreField field, const QVariant &value) const;
    /// Whether a hospital's admin adds one in the stores dialog (the workstation's own cache is not added there).
    virtual bool offeredInDialog() const { return true; }
    /// Its settings with their defaults (a new store of this kind).
    virtual StoreSettings defaults() const = 0;
    /// Its settings read from a store's JSON record (`where` names the store in errors): each field of the type it
    /// must be, missing ones at their defaults. `read` gets every field name it knows, so that the caller can name
    /// a field that is none of this kind's.
    virtual Result<StoreSettings> readJson(const QJsonObject &json, const QString &where, QSet<QString> &read) const = 0;
    /// A clear error naming the store (`where`) and the field, or none — its own fields only (the name and the
    /// limits are StoreConfig::validate()'s). `store` is of this kind.
    virtual Error validate(const StoreConfig &store, const QString &where) const = 0;
    /// Its fields into `json` (only the set ones).
    virtual void writeJson(const StoreConfig &store, QJsonObject &json) const = 0;
    /// "dicomweb https://pacs/dicom-web (basic, user)" — for lists; never a secret.
    virtual QString summary(const StoreConfig &store) const = 0;
    /// The DICOM node (AE title, host) it is, when it is one: it may send to our Storage SCP (what it is asked to
    /// move), and where this workstation listens is chosen facing it.
    virtual std::optional<QPair<QString, QString>> dicomNode(const StoreConfig &) const { return std::nullopt; }
    /// The archive it makes of `store` (`all`: the whole configuration, for secrets; `cache`: the workstation's).
    virtual std::unique_ptr<Archive> makeArchive(const StoreConfig &store, const StoreConfigFile &all, std::shared_ptr<FileStore> cache) const = 0;
};

/// The kind of `kind`.
const ArchiveKind &archiveKind(StoreKind kind);
/// Every kind, in SPECTRUM_STORE_KINDS' order.
QList<const ArchiveKind *> archiveKinds();

} // namespace spectrum

#pragma once
// Locator: reads a DICOM instance from the nearest place that holds it (../shared/seeds/000_…, "location
// independence"): the memory cache, then the workstation's disk cache, then the cluster (blobd stores), then the
// central archives (DICOMweb, DIMSE) in the order the configuration lists them. What comes from further away lands
// in the disk cache (and memory) on its way, so the next read is near.

#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/resultjob.h"
#include "spectrum/stores/blobstore.h"

#include <QObject>

#include <memory>

namespace spectrum {

class FileStore;
class MemoryStore;
class StoreRegistry;

struct Located
{
    BlobSnapshot instance;
    QString tier;   ///< "memory", "disk", "cluster" or "central"
    QString store;  ///< the configured store it came from ("" for memory and disk)
    QStringList misses;  ///< the stores asked before it, and why they could not give it
};

class Locator : public QObject
{
    Q_OBJECT
public:
    /// `memory` may be null. The registry's cache must be `disk`.
    Locator(MemoryStore *memory, std::shared_ptr<FileStore> disk, StoreRegistry *registry, QObject *parent = nullptr);

    /// The instance `identity` names (SOP Instance UID; study and series UIDs to ask archives for it).
    ResultJob<Located> *locate(const DicomIdentity &identity);

    /// The remote stores in the order they are asked: blobd stores first (the cluster), then the archives.
    QStringList remoteOrder() const;

private:
    MemoryStore *m_memory;
    std::shared_ptr<FileStore> m_disk;
    StoreRegistry *m_registry;
};

} // namespace spectrum

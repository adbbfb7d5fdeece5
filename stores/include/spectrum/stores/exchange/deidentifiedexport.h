// SPDX-License-Identifier: Apache-2.0
#pragma once
// A de-identified copy of cached instances (deidentify.h) written to a folder — one export, one UID map: the
// references between its instances resolve, and nothing links it back to the original or to another export.

#include "spectrum/core/resultjob.h"
#include "spectrum/imaging/documents/deidentify.h"

namespace spectrum {

class BlobStore;

struct DeidentifiedExport
{
    QStringList files;                         ///< written, as NEW_SOP_INSTANCE_UID.dcm
    QList<QPair<QString, QString>> burnedIn;   ///< (new SOP Instance UID, why its pixels may still identify)
    int textsKept = 0;                         ///< free texts kept as written (report texts, notes, annotation words)
};

/// De-identifies the cached instances `keys` into folder `outDir` (made if needed), on the pool (`cache` must read
/// on any thread). Fails on the first instance that cannot be read or is not DICOM; nothing is half written (each
/// file is written whole or not at all).
ResultJob<DeidentifiedExport> *exportDeidentified(BlobStore *cache, QStringList keys, DeidentifyOptions options, QString outDir);

} // namespace spectrum

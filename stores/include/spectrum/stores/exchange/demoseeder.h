// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writes the demo archive (imaging/demostudies.h) into a store, instance by instance, through the ordinary
// reserve / write / commit path — so a fresh workstation has real studies to read.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/blobs/blobstore.h"

namespace spectrum {

/// The job's value is the number of instances committed. Blob keys are the SOP Instance UIDs. Progress comes
/// as the store's blobCommitted() signals. Runs on the pool; cancellable between instances.
/// The store must outlive the job (owners cancel it and wait for blockingPool() before deleting the store).
ResultJob<int> *seedDemoStudies(BlobStore *store, const DemoOptions &options = DemoOptions());

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Who and what the stores' audit messages name: a configured store as a peer (its address and name), and the
// studies (each with its patient and its SOP classes counted) of the instances an operation touched.

#include "spectrum/core/audit/auditevents.h"
#include "spectrum/core/dicomidentity.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QList>

namespace spectrum {

auditevents::Peer auditPeerOf(const StoreConfig &config);
QList<auditevents::Study> auditStudiesOf(const QList<DicomIdentity> &identities);
/// A study as listed (no SOP classes counted).
auditevents::Study auditStudyOf(const StudySummary &study);

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#pragma once
// An archive with its audit trail: every store StoreRegistry builds is this around the archive of its kind, so
// that each search is a Query message, each fetch a Begin Transferring and a DICOM Instances Transferred (per
// study, its patient named), each send a DICOM Instances Transferred the other way, and each refusal of our
// credentials or of a certificate a Security Alert — whichever program, window or command asked. Nothing is
// recorded when the process has no audit trail (core's audit.h).

#include "spectrum/core/audit/auditevents.h"
#include "spectrum/stores/archives/archive.h"

#include <memory>

namespace spectrum {

class AuditedArchive : public Archive
{
    Q_OBJECT
public:
    explicit AuditedArchive(std::unique_ptr<Archive> inner);
    ~AuditedArchive() override;

    /// The archive of the store's kind, for what only it does (a DIMSE archive's move destination).
    Archive *inner() const { return m_inner.get(); }

    Reach reach() const override { return m_inner->reach(); }
    ResultJob<Done> *test() override;
    ResultJob<QList<DicomRecord>> *search(const DicomQuery &query) override;
    ResultJob<StudySummary> *list(const QString &studyUid) override;
    ResultJob<StudySummary> *firstLook(const QString &studyUid) override;
    ResultJob<FetchSummary> *fetch(const FetchRequest &what, const FetchOptions &options, Kept kept) override;
    ResultJob<ExportSummary> *send(const QStringList &files) override;

    /// A Security Alert when `error` is a refusal of our credentials or of `peer`'s certificate.
    static void alertOn(const auditevents::Peer &peer, const Error &error);

private:
    std::unique_ptr<Archive> m_inner;
};

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#pragma once
// BlobdArchive: a blob store on the network (spectrum-blobd, the cluster): searched and listed by the DICOM
// identities it indexes, fetched by parallel, verified pulls, sent to by pushes. A BlobClient per operation.
// Private to stores.

#include "spectrum/stores/archives/archive.h"

namespace spectrum {

class BlobdArchive : public Archive
{
    Q_OBJECT
public:
    using Archive::Archive;

    Reach reach() const override { return Reach::ReadingRoom; }
    ResultJob<Done> *test() override;
    ResultJob<QList<DicomRecord>> *search(const DicomQuery &query) override;
    ResultJob<StudySummary> *list(const QString &studyUid) override;
    ResultJob<FetchSummary> *fetch(const FetchRequest &what, const FetchOptions &options, Kept kept) override;
    ResultJob<ExportSummary> *send(const QStringList &files) override;
};

/// Files into a blob store, keyed by SOP Instance UID; `put` stores one. Blocking: on the pool.
ExportSummary sendFiles(const QStringList &files, const std::function<Error(const QString &sop, const ByteView &bytes)> &put);

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#pragma once
// LocalArchive: the workstation's own cache, or another cache folder (`path`: a disk of studies brought from
// elsewhere, a folder archive), as a store — searched through its index, listed from it, sent to by writing into
// it. A folder's studies are fetched into the cache like any archive's; nothing is fetched from the cache itself:
// it is where fetches land. Private to stores.

#include "spectrum/stores/archives/archive.h"

namespace spectrum {

class LocalArchive : public Archive
{
    Q_OBJECT
public:
    LocalArchive(StoreConfig config, StoreConfigFile all, std::shared_ptr<FileStore> cache, QObject *parent = nullptr);

    Reach reach() const override { return m_config.as<LocalSettings>().path.isEmpty() ? Reach::Unreachable : Reach::ThisMachine; }
    ResultJob<Done> *test() override;
    ResultJob<QList<DicomRecord>> *search(const DicomQuery &query) override;
    ResultJob<StudySummary> *list(const QString &studyUid) override;
    ResultJob<FetchSummary> *fetch(const FetchRequest &what, const FetchOptions &options, Kept kept) override;
    ResultJob<ExportSummary> *send(const QStringList &files) override;

    /// The store: the workstation's cache, or the folder the configuration names — opened on first use (on the
    /// pool, by the first job that needs it) and kept while the archive lives, so that its searches, listings and
    /// fetches share one index and the folder's lock. Thread-safe.
    class Folder;

private:
    std::shared_ptr<Folder> m_folder;
};

} // namespace spectrum

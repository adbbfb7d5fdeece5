// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/archives/archive.h"

#include "spectrum/stores/archives/archivekind.h"

#include "spectrum/stores/blobs/filestore.h"

namespace spectrum {

void describeSend(ResultJob<ExportSummary> *job)
{
    job->setStatusText(QObject::tr("preparing…"));
    QObject::connect(job, &Job::progress, job, [job](qint64 done, qint64 total) {
        if (total > 0 && !job->isFinished())  // a report still on its way after the end does not undo it
            job->setStatusText(QObject::tr("%1 of %2 images made · sending").arg(done).arg(total));
    });
    QObject::connect(job, &Job::finished, job, [job] {
        const Result<ExportSummary> &result = job->result();
        if (!result.isOk()) {
            job->setStatusText(result.error().code() == ErrorCode::Cancelled ? QObject::tr("cancelled")
                                                                             : QObject::tr("failed: %1").arg(result.error().toString()));
        } else if (result.value().failed.isEmpty()) {
            job->setStatusText(QObject::tr("%n image(s) stored", nullptr, int(result.value().stored.size())));
        } else {
            job->setStatusText(QObject::tr("%1 stored, %2 refused: %3").arg(result.value().stored.size()).arg(result.value().failed.size())
                                   .arg(result.value().failed.first().second));
        }
    });
}

bool HeldKeys::contains(const QString &key) const
{
    QMutexLocker lock(&m_mutex);
    return m_keys.contains(key);
}

void HeldKeys::insert(const QString &key)
{
    QMutexLocker lock(&m_mutex);
    m_keys.insert(key);
}

void HeldKeys::remove(const QString &key)
{
    QMutexLocker lock(&m_mutex);
    m_keys.remove(key);
}

Archive::Archive(StoreConfig config, StoreConfigFile all, std::shared_ptr<FileStore> cache, QObject *parent)
    : QObject(parent), m_config(std::move(config)), m_all(std::move(all)), m_cache(std::move(cache))
{
    setObjectName(m_config.name);
}

Archive::~Archive() = default;

ResultJob<StudySummary> *Archive::firstLook(const QString &)
{
    return track(failedJob<StudySummary>(Error(ErrorCode::Unsupported, QStringLiteral("store '%1' is listed at once").arg(name()))));
}

void Archive::retire()
{
    m_retired = true;
    setParent(nullptr);
    if (m_running == 0)
        deleteLater();
}

std::unique_ptr<Archive> makeArchive(const StoreConfig &config, const StoreConfigFile &all, std::shared_ptr<FileStore> cache)
{
    return archiveKind(config.kind()).makeArchive(config, all, std::move(cache));
}

} // namespace spectrum

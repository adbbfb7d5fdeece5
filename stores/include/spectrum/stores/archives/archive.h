// SPDX-License-Identifier: Apache-2.0
#pragma once
// Archive: one configured store behind one face — test the connection, search it, list a study, take a first look
// at one, fetch instances into the workstation's cache (or a folder), send files to it. One implementation per
// kind of store, one file each: DICOMweb (dicomwebarchive.cpp), DIMSE (dimsearchive.cpp), blobd
// (blobdarchive.cpp) and the workstation's own cache (localarchive.cpp). StoreRegistry builds one per configured
// store, keeps it (and its client, with its open connections) while the configuration stays, and rebuilds it when
// the configuration changes; it fans out, merges and picks, and never talks a protocol itself.
//
// Every operation is a job. What a fetch brings is checked (a well-formed instance of the study asked for, of
// one patient) before it is kept; only whole instances are kept.

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomquery.h"
#include "spectrum/core/resultjob.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QMutex>
#include <QObject>
#include <QSet>

#include <functional>
#include <memory>

namespace spectrum {

class FileStore;

struct FetchSummary
{
    int instances = 0;
    qint64 bytes = 0;
    double seconds = 0;
    double firstInstanceSeconds = -1;  ///< time until the first instance was whole in memory (cached a moment later)
    int rejected = 0;                  ///< instances of another study or patient, dropped
    QStringList sopInstanceUids;
    QList<DicomIdentity> identities;   ///< of the instances counted (kept, or here already), as their headers say
    QStringList problems;              ///< what went wrong with the rest (a part that is not DICOM, a cut answer…)
    /// A DICOMweb archive of several servers (StoreConfig::mirrors): those that sent series, and those that
    /// stopped answering midway (their series were fetched from the others).
    QStringList servers;
    QStringList serversLost;
};

/// Keys already held, shared with fetches under way (thread-safe): an instance a fetch brings again — a study's
/// stream bringing a slice the view's own request brought first — is dropped unread: not written, not announced.
class HeldKeys
{
public:
    bool contains(const QString &key) const;
    void insert(const QString &key);
    void remove(const QString &key);

private:
    mutable QMutex m_mutex;
    QSet<QString> m_keys;
};

/// How a fetch treats what it brings.
struct FetchOptions
{
    /// Into this folder as SOP_INSTANCE_UID.dcm files instead of the cache.
    QString outDir;
    /// Instances already here: dropped when they arrive again (counted, not kept twice). May grow meanwhile.
    std::shared_ptr<const HeldKeys> held;
    /// The study's patient, when known (from its listing; empty: not known): an instance of another is refused
    /// before it is kept.
    QString patientId;
    /// What has arrived of an instance while it streams (fetchInstance over DICOMweb), on the registry's thread.
    std::function<void(const Arrival &)> arriving;

    static FetchOptions into(const QString &folder)
    {
        FetchOptions o;
        o.outDir = folder;
        return o;
    }
};

struct ExportSummary
{
    QStringList stored;                     ///< SOP Instance UIDs (or keys)
    QList<QPair<QString, QString>> failed;  ///< file or UID, and why
};

/// Words for a send as it goes, for whoever shows it (JobTracker): its status text is kept current — "preparing…",
/// "3 of 10 images made · sending", then what the archive stored and refused ("10 image(s) stored", "9 stored,
/// 1 refused: …", "cancelled", "failed: …"). Call before anyone else connects to the job's finished().
void describeSend(ResultJob<ExportSummary> *job);

/// What to fetch: a study, one series of it, or one instance (with its series).
struct FetchRequest
{
    QString studyUid;
    QString seriesUid;
    QString sopUid;
};

class Archive : public QObject
{
    Q_OBJECT
public:
    /// `config` is the store's; `all` the whole configuration (secrets, the workstation's AE title);
    /// `cache` the workstation's disk cache (where fetches land; may be null).
    Archive(StoreConfig config, StoreConfigFile all, std::shared_ptr<FileStore> cache, QObject *parent = nullptr);
    ~Archive() override;

    const StoreConfig &config() const { return m_config; }
    QString name() const { return m_config.name; }

    /// How near the store is, for opening a study several hold: a folder on this machine, the reading room's
    /// cluster (blobd), the hospital's archives (DICOMweb, DIMSE, S3); Unreachable: nothing is fetched from it
    /// (the workstation's own cache, where fetches land).
    enum class Reach { ThisMachine, ReadingRoom, Hospital, Unreachable };
    virtual Reach reach() const = 0;

    /// "Test connection": C-ECHO, one QIDO request, a blobd listing, or opening the local store.
    virtual ResultJob<Done> *test() = 0;
    /// Study-level records matching `query` (a study query).
    virtual ResultJob<QList<DicomRecord>> *search(const DicomQuery &query) = 0;
    /// What the store holds of one study: its series and their instances in order (keys are SOP Instance UIDs).
    virtual ResultJob<StudySummary> *list(const QString &studyUid) = 0;
    /// A first look, much quicker than list(): the study's first series with only the instance a stack opens at.
    /// Unsupported by default (stores that list at once).
    virtual ResultJob<StudySummary> *firstLook(const QString &studyUid);
    /// Brings `what` into the cache (or options.outDir). `kept(instance bytes or empty, id, size)` runs on the
    /// job's thread for every instance kept (not for those already held). The job fails when none could be kept,
    /// and lists the problems otherwise.
    using Kept = std::function<void(const DicomIdentity &id, const ByteView &bytes, qint64 size)>;
    virtual ResultJob<FetchSummary> *fetch(const FetchRequest &what, const FetchOptions &options, Kept kept) = 0;
    /// Sends DICOM files (STOW-RS, C-STORE, blobd push, into the local store).
    virtual ResultJob<ExportSummary> *send(const QStringList &files) = 0;

    /// The configuration changed and this archive is no longer the store's: it goes once its jobs are done.
    void retire();

protected:
    /// Counts `job` as this archive's until it finishes (a retired archive waits for it).
    template <typename J>
    J *track(J *job)
    {
        ++m_running;
        QObject::connect(job, &Job::finished, this, [this] {
            if (--m_running == 0 && m_retired)
                deleteLater();
        });
        return job;
    }

    StoreConfig m_config;
    StoreConfigFile m_all;
    std::shared_ptr<FileStore> m_cache;

private:
    int m_running = 0;
    bool m_retired = false;
};

/// The archive for a configured store, of its kind.
std::unique_ptr<Archive> makeArchive(const StoreConfig &config, const StoreConfigFile &all, std::shared_ptr<FileStore> cache);

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#pragma once
// DicomImport: DICOM files from outside — chosen files, folders walked whole, a CD or USB stick's DICOMDIR (its
// folder) — into the workstation's cache, each instance under its SOP Instance UID. Every file is checked as it
// goes (a Part 10 instance with its UIDs); what is not DICOM (the DICOMDIR itself, viewers' programs on a CD,
// readme files) is counted and named, never fatal. Up to 16 files (and 256 MiB) at once: their bytes read and
// checked on the pool, then stored (FileStore::put, with the identity already read), so the caller's thread never
// waits on the disk and the cache's group commit syncs many commits at once (one file at a time waited for a sync
// each: ~600 files/s). Files of one SOP Instance UID are stored one after the other; the one read last stays. The
// same import serves the workstation's File ▸ Import and drag and drop, and `spectrum-cli import` handed to a
// running workstation.

#include "spectrum/core/error.h"

#include "spectrum/core/dicomidentity.h"

#include <QMap>
#include <QObject>
#include <QPair>
#include <QDateTime>
#include <QHash>
#include <QSet>
#include <QStringList>

#include <functional>

namespace spectrum {

class FileStore;

struct ImportSummary
{
    int imported = 0;
    QStringList notDicom;                      ///< files that are not DICOM instances (skipped)
    QStringList notDicomWhy;                   ///< for each of notDicom: why, in words (a DICOMDIR: the disc's index)
    QList<QPair<QString, QString>> failed;     ///< file, why (unreadable, full disk…)
    QSet<QString> studies;                     ///< Study Instance UIDs of what was imported
    /// Files holding an instance (a SOP Instance UID) another file of the import holds too: left out, and why —
    /// an exact copy, or an older version of the one kept (the newest file is kept).
    QList<QPair<QString, QString>> duplicates;
    /// Studies imported whose images disagree on something a reader should know but that does not make them two
    /// patients (the sex recorded otherwise): the study as a person names it, what its images disagree on.
    QList<QPair<QString, QString>> flagged;
    bool cancelled = false;
};

class DicomImport : public QObject
{
    Q_OBJECT
public:
    /// `paths`: files, folders and DICOMDIR files. `cache` must outlive the import.
    DicomImport(FileStore *cache, QStringList paths, QObject *parent = nullptr);
    ~DicomImport() override;

    void start();
    /// Stops after the file under way; what is imported stays.
    void cancel();
    const ImportSummary &summary() const { return m_summary; }

    /// The files under `paths`: files as they are, folders walked recursively (hidden files skipped), a DICOMDIR
    /// stands for its folder; sorted, each once.
    static QStringList expand(const QStringList &paths);

Q_SIGNALS:
    void progress(int done, int total);
    void finished(const spectrum::ImportSummary &summary);

private:
    void next();
    struct Version
    {
        int index = -1;       ///< the file
        QByteArray digest;    ///< its bytes' SHA-1, to tell an exact copy
        QDateTime modified;
    };
    void store(const Version &file, const QByteArray &bytes, const DicomIdentity &identity);
    /// Whether `a` is kept rather than `b` (two files of one instance): the newer file, of files equally new the
    /// first by name — one order of all the files, never the order their checks happened to finish.
    bool keptBefore(const Version &a, const Version &b) const;
    /// Why a file left out for another of its instance was: said once the import ends, against the file kept.
    QString whyLeftOut(const Version &left, const Version &kept) const;
    void fileDone(qint64 bytes);

    FileStore *m_cache;
    QStringList m_paths;
    QStringList m_files;
    QList<qint64> m_sizes;            ///< of each file, read with the list (on the pool)
    int m_at = 0;                     ///< the next file to start
    int m_done = 0;                   ///< files finished, in any order
    int m_inFlight = 0;
    qint64 m_bytesInFlight = 0;
    bool m_cancelled = false;
    bool m_finished = false;
    QSet<QString> m_keysInFlight;     ///< SOP Instance UIDs being stored
    QHash<QString, Version> m_kept;   ///< SOP Instance UID → the file of this import stored for it (after its put)
    QList<std::function<void()>> m_waitingForKey;  ///< stores of a UID being stored, in the order they came
    QMap<int, QPair<QString, QString>> m_notDicom;  ///< by file index (the summary lists them in file order): file, why
    QMap<int, QPair<QString, QString>> m_failed;
    QMap<int, QPair<QString, Version>> m_leftOut;  ///< by file index: a file left out for another of its instance (UID, file)
    QHash<QString, QHash<QString, QString>> m_sexOf;  ///< study (UID + patient) → SOP Instance UID → the sex it records
    QHash<QString, DicomIdentity> m_studyOf;           ///< study (UID + patient) → an image's identity, to name it
    ImportSummary m_summary;
};

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::ImportSummary)

// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/exchange/dicomimport.h"

#include "spectrum/core/job.h"
#include "spectrum/core/resultjob.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/blobs/filestore.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QMap>

#include <utility>

namespace spectrum {

namespace {
/// A file read and checked on the pool: its bytes and identity, or why it is not imported.
struct Checked
{
    QByteArray bytes;
    QByteArray digest;  ///< SHA-1 of the bytes, to tell an exact copy of another file (hashed here, on the pool)
    QDateTime modified;
    DicomIdentity identity;
    bool dicom = false;
    QString problem;  ///< unreadable (a failure), as opposed to simply not DICOM
    QString why;      ///< not a DICOM instance: why, in words
};

Checked check(const QString &path)
{
    Checked c;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        c.problem = f.errorString();
        return c;
    }
    // The preamble first: a large file that is not DICOM is not read whole.
    const QByteArray head = f.read(132);
    if (head.size() < 132 || head.mid(128, 4) != "DICM") {
        c.why = QStringLiteral("not a DICOM file");
        return c;
    }
    f.seek(0);
    c.bytes = f.readAll();
    if (c.bytes.size() != f.size()) {
        c.problem = QStringLiteral("could not be read whole: %1").arg(f.errorString());
        return c;
    }
    const Result<DicomIdentity> id = readDicomIdentity(ByteView(c.bytes));
    if (QFileInfo(path).fileName().compare(QLatin1String("DICOMDIR"), Qt::CaseInsensitive) == 0) {
        c.why = QStringLiteral("the disc's index (DICOMDIR): read for the files it names, itself no image");
        return c;
    }
    if (!id.isOk() || !id.value().isValid()) {
        c.why = id.isOk() ? QStringLiteral("a DICOM file that holds no image instance (no SOP Instance or Study UID)")
                          : QStringLiteral("a DICOM file whose header cannot be read: %1").arg(id.error().message());
        return c;
    }
    // Its header may read well while the rest is cut short: never kept as if it were whole.
    if (const Error whole = checkDicomWhole(ByteView(c.bytes)); whole.isError()) {
        c.problem = QStringLiteral("a DICOM file cut short or damaged, left out: %1").arg(whole.message());
        return c;
    }
    c.identity = id.value();
    c.dicom = true;
    c.digest = QCryptographicHash::hash(c.bytes, QCryptographicHash::Sha1);
    c.modified = QFileInfo(path).lastModified();
    return c;
}
} // namespace

DicomImport::DicomImport(FileStore *cache, QStringList paths, QObject *parent) : QObject(parent), m_cache(cache), m_paths(std::move(paths))
{
    qRegisterMetaType<spectrum::ImportSummary>();
}

DicomImport::~DicomImport() = default;

QStringList DicomImport::expand(const QStringList &paths)
{
    QStringList files;
    QSet<QString> seen;
    auto add = [&](const QString &file) {
        // A path that names nothing (gone, a broken link) stays in the list: its failure is reported, not lost.
        QString canonical = QFileInfo(file).canonicalFilePath();
        if (canonical.isEmpty())
            canonical = QFileInfo(file).absoluteFilePath();
        if (!seen.contains(canonical)) {
            seen.insert(canonical);
            files << canonical;
        }
    };
    for (const QString &p : paths) {
        QFileInfo info(p);
        // A DICOMDIR indexes the files of its folder and below: importing the folder imports what it lists.
        const QString folder = info.isDir() ? info.absoluteFilePath()
                             : info.fileName().compare(QLatin1String("DICOMDIR"), Qt::CaseInsensitive) == 0 ? info.absolutePath()
                                                                                                            : QString();
        if (folder.isEmpty()) {
            add(p);
            continue;
        }
        QStringList inFolder;
        QDirIterator it(folder, QDir::Files | QDir::NoSymLinks | QDir::Readable, QDirIterator::Subdirectories);
        while (it.hasNext())
            inFolder << it.next();
        inFolder.sort();
        for (const QString &f : inFolder)
            add(f);
    }
    return files;
}

namespace {
constexpr int kFilesAtOnce = 16;
constexpr qint64 kBytesAtOnce = qint64(256) << 20;
} // namespace

void DicomImport::start()
{
    struct Listed
    {
        QStringList files;
        QList<qint64> sizes;
    };
    runOnPool<Listed>(blockingPool(), this, [paths = m_paths] {
        Listed l;
        l.files = expand(paths);
        for (const QString &f : l.files)
            l.sizes << QFileInfo(f).size();
        return l;
    }, [this](Listed &&l) {
        m_files = std::move(l.files);
        m_sizes = std::move(l.sizes);
        Q_EMIT progress(0, int(m_files.size()));
        next();
    });
}

void DicomImport::cancel()
{
    m_cancelled = true;
}

void DicomImport::next()
{
    while (!m_cancelled && m_at < m_files.size() && m_inFlight < kFilesAtOnce
           && (m_inFlight == 0 || m_bytesInFlight + m_sizes[m_at] <= kBytesAtOnce)) {
        const int index = m_at++;
        const QString path = m_files[index];
        const qint64 size = m_sizes[index];
        ++m_inFlight;
        m_bytesInFlight += size;
        runOnPool<Checked>(blockingPool(), this, [path] { return check(path); }, [this, index, path, size](Checked &&c) {
            if (!c.problem.isEmpty()) {
                m_failed.insert(index, {path, c.problem});
                return fileDone(size);
            }
            if (!c.dicom) {
                m_notDicom.insert(index, {path, c.why});
                return fileDone(size);
            }
            store(Version{index, c.digest, c.modified}, c.bytes, c.identity);
        });
    }
    if (m_inFlight == 0 && !m_finished && (m_cancelled || m_at >= m_files.size())) {
        m_finished = true;
        m_summary.cancelled = m_cancelled && m_at < m_files.size();
        for (const auto &[file, why] : std::as_const(m_notDicom)) {
            m_summary.notDicom << file;
            m_summary.notDicomWhy << why;
        }
        // Finished once what was imported is on the disk: one sync for all of it.
        whenDone(m_cache->syncToDisk(), this, [this](const Result<Done> &synced) {
            if (!synced.isOk())
                m_failed.insert(int(m_files.size()), {m_cache->root(), synced.error().toString()});
            for (const auto &f : std::as_const(m_failed))
                m_summary.failed << f;
            for (const auto &[key, left] : std::as_const(m_leftOut)) {
                const auto kept = m_kept.constFind(key);
                m_summary.duplicates << qMakePair(m_files[left.index], kept == m_kept.constEnd() ? QStringLiteral("another file of the same instance was to be kept but could not be stored")
                                                                                                 : whyLeftOut(left, *kept));
            }
            for (auto study = m_sexOf.cbegin(); study != m_sexOf.cend(); ++study) {
                QMap<QString, int> recorded;
                for (const QString &sex : study.value())
                    if (!sex.isEmpty())
                        ++recorded[sex];
                if (recorded.size() < 2)
                    continue;
                QStringList counts;
                for (auto r = recorded.cbegin(); r != recorded.cend(); ++r)
                    counts << QStringLiteral("%1 in %2").arg(r.key()).arg(r.value());
                const DicomIdentity &id = m_studyOf.value(study.key());
                m_summary.flagged << qMakePair(QStringLiteral("%1 (ID %2), %3 %4").arg(DicomIdentity::displayName(id.patientName), id.patientId,
                                                                                      DicomIdentity::displayDate(id.studyDate), id.studyDescription).simplified(),
                                               QStringLiteral("its images record the patient's sex differently (of those imported, %1): imported, "
                                                              "and flagged wherever it is shown").arg(counts.join(QStringLiteral(", "))));
            }
            Q_EMIT finished(m_summary);
        });
    }
}

bool DicomImport::keptBefore(const Version &a, const Version &b) const
{
    if (a.modified != b.modified)
        return a.modified > b.modified;
    // The first by name, then by path: one order of all the files, whatever order they were named or arrive in.
    const QString &pa = m_files[a.index], &pb = m_files[b.index];
    const int byName = QFileInfo(pa).fileName().compare(QFileInfo(pb).fileName());
    return byName != 0 ? byName < 0 : pa < pb;
}

QString DicomImport::whyLeftOut(const Version &left, const Version &kept) const
{
    const QString other = QFileInfo(m_files[kept.index]).fileName();
    if (left.digest == kept.digest)
        return QStringLiteral("the same image as %1 (an exact copy)").arg(other);
    if (left.modified == kept.modified)
        return QStringLiteral("another version of the image in %1 (the same SOP Instance UID), changed at the same time; %1, the first by name, was kept").arg(other);
    return QStringLiteral("another version of the image in %1 (the same SOP Instance UID); %1 is newer and was kept").arg(other);
}

void DicomImport::store(const Version &file, const QByteArray &bytes, const DicomIdentity &identity)
{
    const QString key = identity.sopInstanceUid;
    if (m_keysInFlight.contains(key)) {
        m_waitingForKey << [this, file, bytes, identity] { store(file, bytes, identity); };
        return;
    }
    // Another file of this import holds the same instance: the one kept is chosen by a rule of the files
    // (keptBefore), the other named with why once the import ends — never replaced silently.
    const auto kept = m_kept.constFind(key);
    if (kept != m_kept.constEnd()) {
        if (!keptBefore(file, *kept)) {
            m_leftOut.insert(file.index, {key, file});
            return fileDone(m_sizes[file.index]);
        }
        if (file.digest == kept->digest) {  // the same bytes: kept in its place, nothing to store again
            m_leftOut.insert(kept->index, {key, *kept});
            m_kept.insert(key, file);
            return fileDone(m_sizes[file.index]);
        }
    }
    const bool replacing = kept != m_kept.constEnd();
    m_keysInFlight.insert(key);
    CommitOptions options;
    options.knownIdentity = identity;  // read by check(): not parsed again
    options.durable = false;           // synced all at once when the import ends (FileStore::syncToDisk)
    whenDone(m_cache->put(key, ByteView(bytes), options), this, [this, file, key, identity, replacing](const Result<BlobInfo> &r) {
        if (r.isOk()) {
            if (replacing)  // one image, in its newer version; the older file named
                m_leftOut.insert(m_kept.value(key).index, {key, m_kept.value(key)});
            else
                ++m_summary.imported;
            m_kept.insert(key, file);
            m_summary.studies.insert(identity.studyInstanceUid);
            const QString study = identity.studyInstanceUid + QLatin1Char('\n') + identity.patientId;
            m_sexOf[study].insert(key, identity.patientSex.trimmed().toUpper());
            m_studyOf.insert(study, identity);
        } else {
            m_failed.insert(file.index, {m_files[file.index], r.error().toString()});
        }
        m_keysInFlight.remove(key);
        if (!m_waitingForKey.isEmpty()) {  // another file of an instance: stored now (it may be this one's)
            const QList<std::function<void()>> waiting = std::exchange(m_waitingForKey, {});
            for (const auto &again : waiting)
                again();
        }
        fileDone(m_sizes[file.index]);
    });
}

void DicomImport::fileDone(qint64 bytes)
{
    --m_inFlight;
    m_bytesInFlight -= bytes;
    ++m_done;
    Q_EMIT progress(m_done, int(m_files.size()));
    next();
}

} // namespace spectrum

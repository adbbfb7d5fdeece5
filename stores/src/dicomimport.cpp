#include "spectrum/stores/dicomimport.h"

#include "spectrum/core/job.h"
#include "spectrum/core/resultjob.h"
#include "spectrum/imaging/dicomdecoder.h"
#include "spectrum/stores/filestore.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

#include <utility>

namespace spectrum {

namespace {
/// A file read and checked on the pool: its bytes and identity, or why it is not imported.
struct Checked
{
    QByteArray bytes;
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
            store(index, c.identity.sopInstanceUid, c.bytes, c.identity);
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
            for (const auto &f : std::as_const(m_duplicates))
                m_summary.duplicates << f;
            Q_EMIT finished(m_summary);
        });
    }
}

void DicomImport::store(int index, const QString &key, const QByteArray &bytes, const DicomIdentity &identity)
{
    if (m_keysInFlight.contains(key)) {
        m_waitingForKey << [this, index, key, bytes, identity] { store(index, key, bytes, identity); };
        return;
    }
    // Another file of this import holds the same instance: an exact copy is left out; of two versions the newer
    // file is kept, and the other named, never replaced silently.
    const QByteArray digest = QCryptographicHash::hash(bytes, QCryptographicHash::Sha1);
    const QDateTime modified = QFileInfo(m_files[index]).lastModified();
    const auto kept = m_kept.constFind(key);
    bool replacing = false;
    if (kept != m_kept.constEnd()) {
        const QString other = QFileInfo(m_files[kept->index]).fileName();
        if (kept->digest == digest) {
            m_duplicates.insert(index, {m_files[index], QStringLiteral("the same image as %1 (an exact copy)").arg(other)});
            return fileDone(m_sizes[index]);
        }
        if (modified <= kept->modified) {
            m_duplicates.insert(index, {m_files[index], QStringLiteral("another version of the image in %1 (the same SOP Instance UID); %1 is newer and was kept").arg(other)});
            return fileDone(m_sizes[index]);
        }
        m_duplicates.insert(kept->index, {m_files[kept->index], QStringLiteral("another version of the image in %1 (the same SOP Instance UID); %1 is newer and was kept")
                                                                    .arg(QFileInfo(m_files[index]).fileName())});
        replacing = true;
    }
    m_kept.insert(key, Kept{index, digest, modified});
    m_keysInFlight.insert(key);
    CommitOptions options;
    options.knownIdentity = identity;  // read by check(): not parsed again
    options.durable = false;           // synced all at once when the import ends (FileStore::syncToDisk)
    whenDone(m_cache->put(key, ByteView(bytes), options), this, [this, index, key, identity, replacing](const Result<BlobInfo> &r) {
        if (r.isOk()) {
            m_summary.imported += replacing ? 0 : 1;  // one image, in its newer version
            m_summary.studies.insert(identity.studyInstanceUid);
        } else {
            m_failed.insert(index, {m_files[index], r.error().toString()});
        }
        m_keysInFlight.remove(key);
        if (!m_waitingForKey.isEmpty()) {  // another file of an instance: stored now (it may be this one's)
            const QList<std::function<void()>> waiting = std::exchange(m_waitingForKey, {});
            for (const auto &again : waiting)
                again();
        }
        fileDone(m_sizes[index]);
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

#include "spectrum/stores/dicomimport.h"

#include "spectrum/core/job.h"
#include "spectrum/core/resultjob.h"
#include "spectrum/imaging/dicomdecoder.h"
#include "spectrum/stores/filestore.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

namespace spectrum {

namespace {
/// A file read and checked on the pool: its bytes and identity, or why it is not imported.
struct Checked
{
    QByteArray bytes;
    DicomIdentity identity;
    bool dicom = false;
    QString problem;  ///< unreadable (a failure), as opposed to simply not DICOM
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
    if (head.size() < 132 || head.mid(128, 4) != "DICM")
        return c;
    f.seek(0);
    c.bytes = f.readAll();
    if (c.bytes.size() != f.size()) {
        c.problem = QStringLiteral("could not be read whole: %1").arg(f.errorString());
        return c;
    }
    const Result<DicomIdentity> id = readDicomIdentity(ByteView(c.bytes));
    if (!id.isOk() || !id.value().isValid() || QFileInfo(path).fileName().compare(QLatin1String("DICOMDIR"), Qt::CaseInsensitive) == 0)
        return c;  // a DICOMDIR, or a header without the UIDs of an instance
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

void DicomImport::start()
{
    runOnPool<QStringList>(blockingPool(), this, [paths = m_paths] { return expand(paths); }, [this](QStringList &&files) {
        m_files = std::move(files);
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
    if (m_cancelled || m_at >= m_files.size()) {
        m_summary.cancelled = m_cancelled && m_at < m_files.size();
        Q_EMIT finished(m_summary);
        return;
    }
    const QString path = m_files[m_at];
    runOnPool<Checked>(blockingPool(), this, [path] { return check(path); }, [this, path](Checked &&c) {
        auto done = [this] {
            ++m_at;
            Q_EMIT progress(m_at, int(m_files.size()));
            next();
        };
        if (!c.problem.isEmpty()) {
            m_summary.failed.append({path, c.problem});
            return done();
        }
        if (!c.dicom) {
            m_summary.notDicom << path;
            return done();
        }
        const DicomIdentity id = c.identity;
        whenDone(m_cache->put(id.sopInstanceUid, ByteView(std::move(c.bytes))), this, [this, path, id, done](const Result<BlobInfo> &r) {
            if (r.isOk()) {
                ++m_summary.imported;
                m_summary.studies.insert(id.studyInstanceUid);
            } else {
                m_summary.failed.append({path, r.error().toString()});
            }
            done();
        });
    });
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the disk-cache suites share: blobs put and read back, stores opened, patterns, trees copied as a crash leaves them.

#include "spectrum/imaging/demostudies.h"
#include "spectrum/stores/blobs/filestore.h"
#include "testsupport.h"
#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QtConcurrent/QtConcurrentRun>
#include <QSignalSpy>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <atomic>
#include <fcntl.h>
#include <sys/stat.h>

namespace spectrum::test {

using namespace spectrum;

inline Result<BlobInfo> putBlob(BlobStore &store, const QString &key, const QByteArray &bytes)
{
    Result<BlobWriterPtr> w = runSync(store.reserve(key, bytes.size()));
    if (!w.isOk())
        return w.error();
    // Two ranges, written out of order, as a multi-stream transfer would.
    const qint64 half = bytes.size() / 2;
    if (Error e = runSync(store.write(w.value(), half, ByteView(bytes.mid(half)))).error(); e.isError())
        return e;
    if (Error e = runSync(store.write(w.value(), 0, ByteView(bytes.left(half)))).error(); e.isError())
        return e;
    return runSync(store.commit(w.value()));
}

inline QByteArray readBlob(BlobStore &store, const QString &key, ByteRange range = ByteRange::all())
{
    Result<ByteView> v = runSync(store.read(key, range));
    return v.isOk() ? v.value().toByteArray() : QByteArray("<error: ") + v.error().toString().toUtf8() + '>';
}

inline std::unique_ptr<FileStore> openStore(const QString &root, qint64 budget = 0)
{
    auto r = FileStore::open(root, budget);
    if (!r.isOk())
        qWarning() << r.error().toString();
    return r.isOk() ? r.takeValue() : nullptr;
}

inline QByteArray pattern(int size, char seed)
{
    QByteArray b(size, Qt::Uninitialized);
    for (int i = 0; i < size; ++i)
        b[i] = char(seed + i * 7);
    return b;
}

// The on-disk state a crash would leave: the directory as it is now, without the live process's lock.
inline void copyTree(const QString &from, const QString &to)
{
    QDirIterator it(from, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString src = it.next();
        const QString rel = QDir(from).relativeFilePath(src);
        if (rel == QLatin1String("lock"))
            continue;
        QDir().mkpath(QFileInfo(to + QLatin1Char('/') + rel).absolutePath());
        QFile::copy(src, to + QLatin1Char('/') + rel);
    }
}

/// Bytes the file system holds for `path` (holes do not count).
inline qint64 allocatedBytes(const QString &path)
{
    struct stat st {};
    return ::stat(QFile::encodeName(path).constData(), &st) == 0 ? qint64(st.st_blocks) * 512 : -1;
}

/// Whether the file system under `dir` gives back the blocks of a range inside a file (punch a hole).
inline bool punchesHoles(const QString &dir)
{
    QFile probe(dir + QStringLiteral("/probe"));
    if (!probe.open(QIODevice::ReadWrite) || probe.write(QByteArray(1 << 16, 'x')) != (1 << 16) || !probe.flush())
        return false;
    const bool ok = ::fallocate(probe.handle(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 1 << 15) == 0;
    probe.remove();
    return ok;
}

inline QStringList filesUnder(const QString &dir)
{
    QStringList out;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext())
        out << QDir(dir).relativeFilePath(it.next());
    out.sort();
    return out;
}

} // namespace spectrum::test

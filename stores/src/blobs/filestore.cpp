// SPDX-License-Identifier: Apache-2.0
// FileStore: opening a disk cache and closing it. Its other jobs are in stores/src/blobs/filestore/ (state.h lists them).

#include "blobs/filestore/state.h"

#include "spectrum/core/logging.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QThread>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace spectrum {

using namespace cachedisk;

namespace cachedisk {

QString osError(int err) { return QString::fromLocal8Bit(std::strerror(err)); }

Error ioError(const QString &what, int err)
{
    return Error(err == ENOSPC || err == EDQUOT ? ErrorCode::DiskFull : ErrorCode::Io,
                 QStringLiteral("%1: %2").arg(what, osError(err)));
}

Error fsyncPath(const QString &path)
{
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ioError(QStringLiteral("cannot open %1 to sync it").arg(path), errno);
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    return rc == 0 ? Error() : ioError(QStringLiteral("cannot sync %1").arg(path), err);
}

} // namespace cachedisk

Result<std::unique_ptr<FileStore>> FileStore::open(const QString &root, qint64 budgetBytes)
{
    auto state = std::make_shared<State>();
    state->root = QDir(root).absolutePath();
    state->budget = std::max<qint64>(0, budgetBytes);
    bool set = false;
    if (const int ms = qEnvironmentVariableIntValue("SPECTRUM_CACHE_DEFER_MS", &set); set && ms >= 0)
        state->deferMs = (unsigned long)(ms);
    {
        QMutexLocker journalLock(&state->journalMutex);
        if (Error e = state->openLocked(); e.isError())
            return e;
        state->evictJournalLocked({});
    }
    return std::unique_ptr<FileStore>(new FileStore(std::move(state)));
}

ResultJob<std::shared_ptr<FileStore>> *FileStore::openJob(const QString &root, qint64 budgetBytes)
{
    QThread *caller = QThread::currentThread();
    return makeJob<std::shared_ptr<FileStore>>([root, budgetBytes, caller](const CancelToken &) -> Result<std::shared_ptr<FileStore>> {
        Result<std::unique_ptr<FileStore>> opened = open(root, budgetBytes);
        if (!opened.isOk())
            return opened.error();
        std::shared_ptr<FileStore> store(opened.takeValue());
        store->moveToThread(caller);  // pushed from the thread that created it, as Qt requires
        return store;
    });
}

FileStore::FileStore(std::shared_ptr<State> state) : d(std::move(state))
{
    d->notifier = notifier();
}

FileStore::~FileStore()
{
    d->close();
}

QString FileStore::root() const { return d->root; }

} // namespace spectrum

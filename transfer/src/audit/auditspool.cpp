// SPDX-License-Identifier: Apache-2.0
#include "audit/auditspool.h"

#include "spectrum/core/logging.h"
#include "spectrum/transfer/audit/syslogframe.h"

#include <QDir>
#include <QFile>
#include <QRandomGenerator>
#include <QScopeGuard>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace spectrum {

namespace {

Error ioError(const QString &what, const QString &path)
{
    return Error(errno == ENOSPC ? ErrorCode::DiskFull : ErrorCode::Io,
                 QStringLiteral("%1 %2: %3").arg(what, path, QString::fromLocal8Bit(std::strerror(errno))));
}

Error writeSynced(int fd, const QByteArray &bytes, const QString &path)
{
    const char *p = bytes.constData();
    qsizetype left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, size_t(left));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return ioError(QStringLiteral("cannot write the audit spool"), path);
        p += n;
        left -= n;
    }
    if (::fdatasync(fd) != 0)
        return ioError(QStringLiteral("cannot sync the audit spool"), path);
    return Error();
}

QByteArray readAll(int fd)
{
    QByteArray all;
    char buf[65536];
    ::lseek(fd, 0, SEEK_SET);
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        all.append(buf, n);
    }
    return all;
}

/// The last count a .sent file holds (0 when none).
qint64 lastSent(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    const QList<QByteArray> lines = f.readAll().split('\n');
    for (auto it = lines.crbegin(); it != lines.crend(); ++it) {
        bool ok = false;
        const qint64 n = it->trimmed().toLongLong(&ok);
        if (ok)
            return n;
    }
    return 0;
}

} // namespace

Result<std::unique_ptr<AuditSpool>> AuditSpool::open(const QString &directory, const QString &program, int *adopted)
{
    if (!QDir().mkpath(directory))
        return Error(ErrorCode::Io, QStringLiteral("cannot create the audit spool folder %1").arg(directory));
    QFile::setPermissions(directory, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    std::unique_ptr<AuditSpool> s(new AuditSpool);
    // A name no other process has (several machines may share a home folder): created new, locked, and only then
    // given the name others look for — no one adopts a spool before its owner holds it.
    const QString base = QDir(directory).filePath(QStringLiteral("%1-%2-%3").arg(program).arg(qint64(::getpid())).arg(QRandomGenerator::system()->generate64(), 16, 16, QLatin1Char('0')));
    s->m_spoolPath = base + QStringLiteral(".spool");
    s->m_sentPath = base + QStringLiteral(".sent");
    const QString making = base + QStringLiteral(".new");
    s->m_spoolFd = ::open(QFile::encodeName(making).constData(), O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (s->m_spoolFd < 0)
        return ioError(QStringLiteral("cannot create the audit spool"), making);
    if (::flock(s->m_spoolFd, LOCK_EX | LOCK_NB) != 0 || ::rename(QFile::encodeName(making).constData(), QFile::encodeName(s->m_spoolPath).constData()) != 0) {
        const Error e = ioError(QStringLiteral("cannot set up the audit spool"), s->m_spoolPath);
        QFile::remove(making);
        return e;
    }
    s->m_sentFd = ::open(QFile::encodeName(s->m_sentPath).constData(), O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (s->m_sentFd < 0)
        return ioError(QStringLiteral("cannot create the audit spool"), s->m_sentPath);

    // Adopt the spools of processes that are gone: their lock is free.
    int taken = 0;
    const QStringList names = QDir(directory).entryList({QStringLiteral("*.spool")}, QDir::Files, QDir::Time | QDir::Reversed);
    for (const QString &name : names) {
        const QString path = QDir(directory).filePath(name);
        if (path == s->m_spoolPath)
            continue;
        const int fd = ::open(QFile::encodeName(path).constData(), O_RDWR | O_CLOEXEC);
        if (fd < 0)
            continue;
        const auto closeFd = qScopeGuard([fd] { ::close(fd); });
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0)
            continue;  // a living process's
        // Still the file of that name (another adopter may have taken and removed it meanwhile).
        struct stat held = {}, named = {};
        if (::fstat(fd, &held) != 0 || held.st_nlink == 0 || ::stat(QFile::encodeName(path).constData(), &named) != 0 || named.st_ino != held.st_ino)
            continue;
        QString sentPath = path;
        sentPath.replace(QLatin1String(".spool"), QLatin1String(".sent"));
        const QByteArray bytes = readAll(fd);
        qsizetype used = 0;
        Result<QList<QByteArray>> frames = parseSyslogFrames(bytes, &used);
        if (!frames.isOk()) {
            // Whole frames up to the damage are still sent; the rest is kept aside for the administrator.
            qCWarning(lcTransfer).noquote() << "audit spool" << path << "is damaged, kept aside as .damaged:" << frames.error().message();
            QFile::copy(path, path + QStringLiteral(".damaged"));
            const qsizetype whole = used;
            frames = parseSyslogFrames(bytes.left(whole), &used);
            if (!frames.isOk())
                frames = QList<QByteArray>();
            used = bytes.size();  // the rest is the damage, said above
        }
        if (used < bytes.size())
            qCWarning(lcTransfer).noquote() << "audit spool" << path << "ends in a message cut short (its program stopped while writing it): dropped";
        const qint64 sent = std::clamp<qint64>(lastSent(sentPath), 0, frames.value().size());
        for (qsizetype i = sent; i < frames.value().size(); ++i) {
            if (Error e = s->append(syslogFrame(frames.value().at(i))); e.isError())
                return e;  // theirs stays, for the next try
            ++taken;
        }
        QFile::remove(sentPath);
        QFile::remove(path);
    }
    if (adopted)
        *adopted = taken;
    return s;
}

AuditSpool::~AuditSpool()
{
    if (m_pending.isEmpty()) {
        QFile::remove(m_sentPath);
        QFile::remove(m_spoolPath);  // unlinked while locked: no one adopts an empty spool
    }
    if (m_sentFd >= 0)
        ::close(m_sentFd);
    if (m_spoolFd >= 0)
        ::close(m_spoolFd);
}

Error AuditSpool::append(const QByteArray &frame)
{
    const off_t before = ::lseek(m_spoolFd, 0, SEEK_END);
    if (Error e = writeSynced(m_spoolFd, frame, m_spoolPath); e.isError()) {
        // Not on the disk (full?): what was written of it goes, so the frames after it stay readable; it is still
        // sent from memory.
        if (before >= 0 && ::ftruncate(m_spoolFd, before) == 0)
            ::fdatasync(m_spoolFd);
        m_pending.append(Pending{frame, false});
        return e;
    }
    m_pending.append(Pending{frame, true});
    return Error();
}

QList<QByteArray> AuditSpool::pending() const
{
    QList<QByteArray> frames;
    frames.reserve(m_pending.size());
    for (const Pending &p : m_pending)
        frames.append(p.frame);
    return frames;
}

Error AuditSpool::delivered(int count)
{
    count = std::min<int>(count, int(m_pending.size()));
    if (count <= 0)
        return Error();
    // The count is of the spool file's frames: one sent from memory alone is not among them.
    for (int i = 0; i < count; ++i)
        m_deliveredTotal += m_pending.at(i).onDisk ? 1 : 0;
    m_pending.erase(m_pending.begin(), m_pending.begin() + count);
    if (m_pending.isEmpty()) {
        // Everything is out: start both files again, the count first — a crash between leaves delivered frames
        // with no count, sent again (twice rather than never), never new frames under an old count.
        if (::ftruncate(m_sentFd, 0) == 0 && ::fdatasync(m_sentFd) == 0 && ::ftruncate(m_spoolFd, 0) == 0 && ::fdatasync(m_spoolFd) == 0) {
            m_deliveredTotal = 0;
            return Error();
        }
    }
    return appendSent(m_deliveredTotal);
}

Error AuditSpool::appendSent(qint64 total)
{
    return writeSynced(m_sentFd, QByteArray::number(total) + '\n', m_sentPath);
}

} // namespace spectrum

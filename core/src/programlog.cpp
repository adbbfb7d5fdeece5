// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/programlog.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QMutex>
#include <QStandardPaths>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace spectrum {

namespace {

struct LogState
{
    QMutex mutex;
    ProgramLogOptions options;
    QByteArray program;
    QString path;        ///< the file written; empty: none
    int fd = -1;
    ino_t inode = 0;     ///< of the file opened: another process may have rotated it away
    qint64 size = 0;
    int stderrRank = 2;  ///< warnings and up
    int fileRank = 1;
};

LogState &state()
{
    static auto *s = new LogState;  // never destroyed: messages may come from static destructors after main()
    return *s;
}

int rankOf(QtMsgType type)
{
    switch (type) {
    case QtDebugMsg: return 0;
    case QtInfoMsg: return 1;
    case QtWarningMsg: return 2;
    case QtCriticalMsg: return 3;
    case QtFatalMsg: return 4;
    }
    return 2;
}

int rankOf(LogLevel level)
{
    return int(level);
}

const char *typeName(QtMsgType type)
{
    switch (type) {
    case QtDebugMsg: return "debug";
    case QtInfoMsg: return "info";
    case QtWarningMsg: return "warning";
    case QtCriticalMsg: return "error";
    case QtFatalMsg: return "fatal";
    }
    return "?";
}

void writeAll(int fd, const QByteArray &bytes)
{
    const char *p = bytes.constData();
    qsizetype left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, size_t(left));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;  // a full disk: the line is lost, nothing else is
        p += n;
        left -= n;
    }
}

/// Opens (creating, owner-only) the log file; -1 and the reason when it cannot be.
int openLog(const QString &path, QString *why, ino_t *inode, qint64 *size)
{
    const int fd = ::open(QFile::encodeName(path).constData(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        *why = QString::fromLocal8Bit(std::strerror(errno));
        return -1;
    }
    struct stat st = {};
    if (::fstat(fd, &st) == 0) {
        *inode = st.st_ino;
        *size = st.st_size;
    }
    return fd;
}

/// Moves the full file to .1 (and .1 to .2 …, the last dropped) and starts a new one. Under the state's lock, and
/// under a lock file the program's other processes take too: one of them rotates, the others follow.
void rotate(LogState &s)
{
    const int lock = ::open(QFile::encodeName(s.path + QStringLiteral(".lock")).constData(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock >= 0)
        ::flock(lock, LOCK_EX);
    struct stat st = {};
    const bool ours = ::stat(QFile::encodeName(s.path).constData(), &st) == 0 && st.st_ino == s.inode;
    ::close(s.fd);
    s.fd = -1;
    if (!ours) {  // another process rotated it meanwhile: write to the new file
        QString why;
        s.fd = openLog(s.path, &why, &s.inode, &s.size);
        if (lock >= 0)
            ::close(lock);
        return;
    }
    const int keep = std::max(1, s.options.keepRotated);
    QFile::remove(s.path + QStringLiteral(".%1").arg(keep));
    for (int i = keep - 1; i >= 1; --i)
        QFile::rename(s.path + QStringLiteral(".%1").arg(i), s.path + QStringLiteral(".%1").arg(i + 1));
    QFile::rename(s.path, s.path + QStringLiteral(".1"));
    QString why;
    s.fd = openLog(s.path, &why, &s.inode, &s.size);
    if (lock >= 0)
        ::close(lock);
}

/// Another process of the program rotated the file: write to the new one.
void followRotation(LogState &s)
{
    struct stat st = {};
    if (::stat(QFile::encodeName(s.path).constData(), &st) == 0 && st.st_ino == s.inode)
        return;
    ::close(s.fd);
    QString why;
    s.fd = openLog(s.path, &why, &s.inode, &s.size);
}

void handler(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    LogState &s = state();
    const int rank = rankOf(type);
    QString text = message;
    text.replace(QLatin1Char('\n'), QLatin1String("\n    "));  // one entry stays one block
    const QByteArray line = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs).toLatin1() + ' ' + s.program + '['
        + QByteArray::number(qint64(::getpid())) + "] " + typeName(type) + ' '
        + (context.category && std::strcmp(context.category, "default") != 0 ? QByteArray(context.category) + ": " : QByteArray())
        + text.toUtf8() + '\n';
    QMutexLocker lock(&s.mutex);
    if (s.fd >= 0 && rank >= s.fileRank) {
        followRotation(s);
        if (s.fd >= 0) {
            writeAll(s.fd, line);
            s.size += line.size();
            if (s.options.rotateBytes > 0 && s.size > s.options.rotateBytes)
                rotate(s);
        }
    }
    if (rank >= s.stderrRank)
        writeAll(STDERR_FILENO, line);
}

} // namespace

std::optional<LogLevel> logLevelFromName(const QString &name)
{
    const QString n = name.trimmed().toLower();
    if (n == QLatin1String("debug"))
        return LogLevel::Debug;
    if (n == QLatin1String("info"))
        return LogLevel::Info;
    if (n == QLatin1String("warning") || n == QLatin1String("warn"))
        return LogLevel::Warning;
    if (n == QLatin1String("error"))
        return LogLevel::Error;
    return std::nullopt;
}

QString logLevelName(LogLevel level)
{
    switch (level) {
    case LogLevel::Debug: return QStringLiteral("debug");
    case LogLevel::Info: return QStringLiteral("info");
    case LogLevel::Warning: return QStringLiteral("warning");
    case LogLevel::Error: return QStringLiteral("error");
    }
    return QString();
}

QString logDirectory()
{
    if (const QString dir = qEnvironmentVariable("SPECTRUM_LOG_DIR"); !dir.isEmpty())
        return dir;
    if (const QString dir = qEnvironmentVariable("LOGS_DIRECTORY"); !dir.isEmpty())
        return dir.section(QLatin1Char(':'), 0, 0);  // systemd may list several
    QString state = qEnvironmentVariable("XDG_STATE_HOME");
    if (state.isEmpty())
        state = QDir::homePath() + QStringLiteral("/.local/state");
    return state + QStringLiteral("/spectrum/log");
}

Error installProgramLog(const ProgramLogOptions &options)
{
    LogState &s = state();
    Error error;
    {
        QMutexLocker lock(&s.mutex);
        if (s.fd >= 0)
            ::close(s.fd);
        s.fd = -1;
        s.options = options;
        s.program = options.program.toUtf8();
        s.fileRank = rankOf(options.level);
        s.stderrRank = options.stderrLevel ? rankOf(*options.stderrLevel) : rankOf(LogLevel::Warning);
        s.path.clear();
        if (options.file != QLatin1String("-")) {
            const QString path = options.file.isEmpty() ? QDir(logDirectory()).filePath(options.program + QStringLiteral(".log")) : options.file;
            const QString dir = QFileInfo(path).absolutePath();
            const bool made = !QFileInfo::exists(dir);
            if (!QDir().mkpath(dir)) {
                error = Error(ErrorCode::Io, QStringLiteral("cannot create the log folder %1").arg(dir));
            } else {
                if (made)
                    QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
                QString why;
                s.fd = openLog(path, &why, &s.inode, &s.size);
                if (s.fd < 0)
                    error = Error(ErrorCode::Io, QStringLiteral("cannot write the log file %1: %2").arg(path, why));
                else
                    s.path = path;
            }
        }
    }
    // Debug messages of our categories are off unless asked for (QT_LOGGING_RULES still wins).
    const int lowest = std::min(s.fileRank, s.stderrRank);
    QLoggingCategory::setFilterRules(lowest == 0 ? QStringLiteral("spectrum.*.debug=true") : QStringLiteral("spectrum.*.debug=false"));
    qInstallMessageHandler(handler);
    if (error.isError())
        qWarning("%s (logging to stderr only)", qPrintable(error.message()));
    return error;
}

QString programLogFile()
{
    LogState &s = state();
    QMutexLocker lock(&s.mutex);
    return s.path;
}

void closeProgramLog()
{
    LogState &s = state();
    QMutexLocker lock(&s.mutex);
    if (s.fd >= 0)
        ::close(s.fd);
    s.fd = -1;
    s.path.clear();
}

void addProgramLogOptions(QCommandLineParser &parser)
{
    parser.addOption({QStringLiteral("log-level"),
                      QStringLiteral("What is logged: debug, info, warning or error (default: info to the log file, warnings and errors to stderr; "
                                     "a level given here applies to both). Also $SPECTRUM_LOG_LEVEL."),
                      QStringLiteral("LEVEL")});
    parser.addOption({QStringLiteral("log-file"),
                      QStringLiteral("The log file (default: $SPECTRUM_LOG_DIR, $LOGS_DIRECTORY or ~/.local/state/spectrum/log, then the program's "
                                     "name and .log); - for none."),
                      QStringLiteral("FILE")});
}

namespace {

Result<ProgramLogOptions> makeOptions(const QString &program, const QString &level, bool levelGiven, const QString &file)
{
    ProgramLogOptions o;
    o.program = program;
    o.file = file;
    QString wanted = level;
    if (!levelGiven)
        wanted = qEnvironmentVariable("SPECTRUM_LOG_LEVEL");
    if (!wanted.isEmpty()) {
        const std::optional<LogLevel> l = logLevelFromName(wanted);
        if (!l)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("log level '%1' is not one of debug, info, warning, error").arg(wanted));
        o.level = *l;
        o.stderrLevel = *l;
    }
    return o;
}

} // namespace

Result<ProgramLogOptions> programLogOptions(const QCommandLineParser &parser, const QString &program)
{
    return makeOptions(program, parser.value(QStringLiteral("log-level")), parser.isSet(QStringLiteral("log-level")),
                       parser.value(QStringLiteral("log-file")));
}

Result<ProgramLogOptions> takeProgramLogOptions(QStringList &args, const QString &program)
{
    QString level, file;
    bool levelGiven = false;
    for (int i = 1; i < args.size();) {
        const QString a = args.at(i);
        QString *into = nullptr;
        QString name;
        for (const char *opt : {"--log-level", "--log-file"}) {
            const QString o = QLatin1String(opt);
            if (a == o || a.startsWith(o + QLatin1Char('='))) {
                into = o == QLatin1String("--log-level") ? &level : &file;
                name = o;
            }
        }
        if (!into) {
            ++i;
            continue;
        }
        if (a == name) {
            if (i + 1 >= args.size())
                return Error(ErrorCode::InvalidArgument, QStringLiteral("%1 needs a value").arg(name));
            *into = args.at(i + 1);
            args.remove(i, 2);
        } else {
            *into = a.mid(name.size() + 1);
            args.removeAt(i);
        }
        if (into == &level)
            levelGiven = true;
    }
    return makeOptions(program, level, levelGiven, file);
}

} // namespace spectrum

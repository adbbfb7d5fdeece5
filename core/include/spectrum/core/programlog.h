// SPDX-License-Identifier: Apache-2.0
#pragma once
// The program's log: every message Qt and Spectrum write (qDebug… qCritical, the spectrum.* categories) goes, with
// its time (UTC, milliseconds), level and category, to a log file of the program's own and to stderr — what an
// administrator reads when a user says "it did not open". One handler per process, installed by main() of each
// program (spectrum, spectrum-cli, spectrum-blobd); `--log-level` and `--log-file` choose what and where.
//
// The file is private (0600, in a 0700 folder: messages may name studies), appended to by every process of the
// program (one write per line), and rotated by size: spectrum.log, spectrum.log.1 … .3.

#include "spectrum/core/result.h"

#include <QString>
#include <QStringList>

#include <optional>

class QCommandLineParser;

namespace spectrum {

enum class LogLevel { Debug, Info, Warning, Error };

/// "debug", "info", "warning" (or "warn"), "error"; nothing for anything else.
std::optional<LogLevel> logLevelFromName(const QString &name);
QString logLevelName(LogLevel level);

struct ProgramLogOptions
{
    QString program;                 ///< "spectrum", "spectrum-cli", "spectrum-blobd": the file's name and each line's
    LogLevel level = LogLevel::Info; ///< what goes to the file
    /// What goes to stderr: by default warnings and errors only (a command's output stays readable); set when the
    /// user asked for a level (--log-level), which then applies to both.
    std::optional<LogLevel> stderrLevel;
    /// The log file; empty: <logDirectory()>/<program>.log; "-": no file (stderr only).
    QString file;
    qint64 rotateBytes = 10 * 1024 * 1024;
    int keepRotated = 3;
};

/// Where the programs' logs go: $SPECTRUM_LOG_DIR, else $LOGS_DIRECTORY (systemd's LogsDirectory=), else
/// $XDG_STATE_HOME/spectrum/log (~/.local/state/spectrum/log).
QString logDirectory();

/// Installs the handler for the whole process (again: replaces the options). An error when the file cannot be
/// opened — the handler then writes to stderr alone, and says so there once.
Error installProgramLog(const ProgramLogOptions &options);
/// The file being written ("" when none).
QString programLogFile();
/// Writes what is pending and closes the file (tests; a program's exit does it too).
void closeProgramLog();

/// --log-level LEVEL and --log-file FILE, for the programs that parse options with QCommandLineParser.
void addProgramLogOptions(QCommandLineParser &parser);
/// Options from a parser given addProgramLogOptions(); an error for a level that is not one (exit status 2).
Result<ProgramLogOptions> programLogOptions(const QCommandLineParser &parser, const QString &program);
/// The same from raw arguments (spectrum-cli, whose commands parse their own options): removes --log-level and
/// --log-file (with their values, "--opt V" or "--opt=V") from `args`.
Result<ProgramLogOptions> takeProgramLogOptions(QStringList &args, const QString &program);

} // namespace spectrum

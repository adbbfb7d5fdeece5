// SPDX-License-Identifier: Apache-2.0
#pragma once
// spectrum-cli's ways of speaking: a result line on standard output, an error on standard error, a command's help.

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFileInfo>
#include <QString>
#include <QStringList>

#include <cstdlib>

#include <cstdio>

namespace spectrum::cli {

/// One line of results, flushed at once (pipes see it as it comes).
inline void out(const QString &line)
{
    std::printf("%s\n", qPrintable(line));
    std::fflush(stdout);
}

/// Says what went wrong and returns the exit code to give back (1: failed, 2: wrong usage).
inline int fail(const QString &message, int code = 1)
{
    std::fprintf(stderr, "%s: %s\n", qPrintable(QFileInfo(QCoreApplication::applicationFilePath()).fileName()), qPrintable(message));
    return code;
}

/// Parses a command's arguments (the first being "spectrum-cli COMMAND"), as QCommandLineParser::process does
/// but naming the command in its usage ("Usage: spectrum-cli stores edit [options] NAME", not the program alone)
/// and leaving with 2 — wrong usage — on an unknown option or a missing value.
inline void processArguments(QCommandLineParser &p, const QStringList &args)
{
    if (!p.parse(args)) {
        std::fprintf(stderr, "%s: %s\n%s --help gives its options.\n", qPrintable(args.value(0)), qPrintable(p.errorText()), qPrintable(args.value(0)));
        std::exit(2);
    }
    if (p.isSet(QStringLiteral("help")) || p.isSet(QStringLiteral("help-all"))) {  // --help-all: Qt adds it with --help
        QString text = p.helpText();  // "Usage: <argv[0] as run> [options] …"
        const QString program = QCoreApplication::arguments().value(0);
        if (text.startsWith(QStringLiteral("Usage: ") + program))
            text.replace(7, program.size(), args.value(0));
        std::printf("%s", qPrintable(text));
        std::exit(0);
    }
}

} // namespace spectrum::cli

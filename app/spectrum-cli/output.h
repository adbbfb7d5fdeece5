// SPDX-License-Identifier: Apache-2.0
#pragma once
// spectrum-cli's two ways of speaking: a result line on standard output, an error on standard error.

#include <QCoreApplication>
#include <QFileInfo>
#include <QString>

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

} // namespace spectrum::cli

#pragma once
// spectrum-cli's archive commands (see archivecommands.cpp). Each takes the sub-command's arguments, the first
// being "spectrum-cli COMMAND", and returns the process's exit code.

#include <QStringList>

namespace spectrum::cli {

/// Files named on a command line, folders replaced by the files in them (sorted by name).
QStringList expandFiles(const QStringList &arguments);

int cmdStores(const QStringList &args);
int cmdFind(const QStringList &args);
int cmdFetch(const QStringList &args);
int cmdExport(const QStringList &args);
int cmdListen(const QStringList &args);

} // namespace spectrum::cli

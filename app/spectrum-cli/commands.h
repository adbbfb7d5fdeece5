// SPDX-License-Identifier: Apache-2.0
#pragma once
// spectrum-cli's commands: a table of name, synopsis, summary and function, one group per file
// (cachecommands.cpp, imagecommands.cpp, blobcommands.cpp, archivecommands.cpp). main.cpp dispatches on it and
// prints the usage from it. A command takes its arguments, the first being "spectrum-cli COMMAND", and returns
// the process's exit code (0 done, 1 failed, 2 wrong usage).

#include "spectrum/core/result.h"

#include <QList>
#include <QStringList>

#include <memory>

namespace spectrum {
class FileStore;
}

namespace spectrum::cli {

struct Command
{
    const char *name;
    const char *synopsis;        ///< what follows the name in the usage, e.g. "--out DIR"
    const char *summary;
    int (*run)(const QStringList &args);
    bool needsDictionary = true; ///< loads DCMTK's data dictionary beside the command's start
};

QList<Command> cacheCommands();    ///< demo, studies, import
QList<Command> imageCommands();    ///< render, convert, filters, filter
QList<Command> blobCommands();     ///< get, put, stat, ls
QList<Command> storeCommands();    ///< stores add, edit, list, test, remove, share, workstation
QList<Command> archiveCommands();  ///< find, fetch, export, listen
QList<Command> prefetchCommands(); ///< prefetch
QList<Command> findingsCommands(); ///< findings, deidentify
QList<Command> reformatCommands(); ///< reformat
QList<Command> signInCommands();   ///< login, logout

/// The workstation's disk cache (its folder and budget from the environment or the defaults).
Result<std::unique_ptr<FileStore>> openCache();

} // namespace spectrum::cli

// SPDX-License-Identifier: Apache-2.0
#pragma once
// DirectoryLock: one process owns a directory (the disk cache, a blob server's store) until it ends, however it ends.

#include "spectrum/core/result.h"

#include <QString>

#include <memory>

namespace spectrum {

/// Held with flock(2) on a file that is never removed, so the kernel lets go when the holder exits, is killed or
/// crashes: no lock is ever left behind that someone must judge stale. (QLockFile's file is the lock: killed
/// between creating it and writing its pid into it, a process leaves an empty file nobody can prove stale, and the
/// directory stays locked until someone deletes it by hand.) The file tells who holds it: pid, program, host.
class DirectoryLock
{
public:
    /// Takes the lock in `filePath` (created if missing) without waiting. ErrorCode::Busy names the holder when
    /// another process (or another DirectoryLock of this one) has it; Io when the file cannot be opened.
    static Result<std::unique_ptr<DirectoryLock>> acquire(const QString &filePath);

    ~DirectoryLock();
    DirectoryLock(const DirectoryLock &) = delete;
    DirectoryLock &operator=(const DirectoryLock &) = delete;

private:
    explicit DirectoryLock(int fd) : m_fd(fd) {}
    int m_fd;
};

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#pragma once
// CachedReads: which of a study's documents (reports, key image selections, presentation states, segmentations)
// have been asked for from the cache, and which of those reads are still out. A document is read once; a read that
// finds it not there yet is asked again when the cache says it has come. The race this closes: the copy lands while
// its read is out (the read looked a moment before) — that read's "not found" must not be the last word, so the
// landing is remembered and the document read again when the read ends.

#include "spectrum/core/error.h"

#include <QSet>
#include <QString>

namespace spectrum {

/// Whether a read that failed with `e` is to be tried again when the document lands: it was not there (yet), or
/// not whole (a damaged copy is dropped and fetched again) — not when it was there and could not be read as what it
/// claims (said once, not again at each new layout of the study).
inline bool readAgainWhenItLands(const Error &e)
{
    return e.code() == ErrorCode::NotFound || e.code() == ErrorCode::Corrupt || e.code() == ErrorCode::Io;
}

class CachedReads
{
public:
    /// Whether to read `key` now: not read, nor being read.
    bool ask(const QString &key)
    {
        if (m_asked.contains(key))
            return false;
        m_asked.insert(key);
        m_out.insert(key);
        return true;
    }
    /// The cache has `key` now: whether to read it now. A read out for it is followed by another when it ends.
    bool landed(const QString &key)
    {
        if (m_out.contains(key)) {
            m_again.insert(key);
            return false;
        }
        return ask(key);
    }
    /// The read of `key` ended; `done`: it was read, or found unreadable (not to be read again). Whether to read it
    /// again (it was not there, and has landed since).
    bool ended(const QString &key, bool done)
    {
        m_out.remove(key);
        const bool again = m_again.remove(key);
        if (done)
            return false;
        m_asked.remove(key);  // not in the cache yet: asked again once it is
        return again;
    }
    /// The reads out are dropped (their answers are for an older study): what they were reading is asked again.
    void dropOut()
    {
        for (const QString &key : std::as_const(m_out))
            m_asked.remove(key);
        m_out.clear();
        m_again.clear();
    }
    void clear()
    {
        m_asked.clear();
        m_out.clear();
        m_again.clear();
    }

private:
    QSet<QString> m_asked;  ///< read, or being read
    QSet<QString> m_out;    ///< being read
    QSet<QString> m_again;  ///< being read, and landed in the cache since the read began
};

} // namespace spectrum

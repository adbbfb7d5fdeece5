// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the index's files share (indexdb.cpp: rows and changes; indexstudies.cpp: study counts and searches): the
// prepared statements and the small helpers over SQLite's API.

#include "blobs/filestore/indexdb.h"

#include <sqlite3.h>

#include <vector>

namespace spectrum::cachedisk {

struct IndexDb::Statements
{
    sqlite3_stmt *find = nullptr, *take = nullptr, *insert = nullptr, *update = nullptr, *touch = nullptr, *oldest = nullptr,
                 *packInUse = nullptr, *unsynced = nullptr, *all = nullptr, *studyAdd = nullptr, *studySub = nullptr,
                 *studyDrop = nullptr, *seriesAdd = nullptr, *seriesSub = nullptr, *seriesDrop = nullptr, *meta = nullptr,
                 *seriesOf = nullptr, *begin = nullptr, *commit = nullptr, *rollback = nullptr;
    std::vector<sqlite3_stmt *> owned;
    ~Statements()
    {
        for (sqlite3_stmt *st : owned)
            sqlite3_finalize(st);
    }
};

namespace indexsql {

/// Counts one more instance into its series; the series' fields come from its first instance that records each
/// (as summarizeStudies() takes them). Bound by IndexDb::addSeries.
inline constexpr const char *kSeriesAdd =
    "INSERT INTO series(study, patient, series, modality, number, description, body, view, plane, thickness,"
    " instances) VALUES(?,?,?,?,?,?,?,?,?,?,1) ON CONFLICT(study, patient, series) DO UPDATE SET"
    " instances = instances + 1, body = coalesce(nullif(body, ''), excluded.body),"
    " view = coalesce(nullif(view, ''), excluded.view), plane = coalesce(nullif(plane, ''), excluded.plane),"
    " thickness = CASE WHEN thickness > 0 THEN thickness ELSE excluded.thickness END";

inline QString text(sqlite3_stmt *st, int col)
{
    const auto *p = reinterpret_cast<const char *>(sqlite3_column_text(st, col));
    return p ? QString::fromUtf8(p, sqlite3_column_bytes(st, col)) : QString();
}

inline QByteArray blob(sqlite3_stmt *st, int col)
{
    const void *p = sqlite3_column_blob(st, col);
    return p ? QByteArray(static_cast<const char *>(p), sqlite3_column_bytes(st, col)) : QByteArray();
}


inline void bindText(sqlite3_stmt *st, int i, const QString &s)
{
    const QByteArray u = s.toUtf8();
    sqlite3_bind_text(st, i, u.constData(), int(u.size()), SQLITE_TRANSIENT);
}

inline void bindTextOrNull(sqlite3_stmt *st, int i, const QString &s)
{
    if (s.isEmpty())
        sqlite3_bind_null(st, i);
    else
        bindText(st, i, s);
}

inline void bindBlobOrNull(sqlite3_stmt *st, int i, const QByteArray &b)
{
    if (b.isEmpty())
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_blob(st, i, b.constData(), int(b.size()), SQLITE_TRANSIENT);
}


/// A statement reset (and its bindings cleared) when the scope ends, whatever happens in it.
struct Using
{
    sqlite3_stmt *st;
    explicit Using(sqlite3_stmt *s) : st(s) {}
    ~Using()
    {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
};


} // namespace indexsql

} // namespace spectrum::cachedisk

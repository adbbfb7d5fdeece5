// SPDX-License-Identifier: Apache-2.0
#pragma once
// A look into the disk cache's index (index.sqlite) with SQLite itself, as an admin's `sqlite3` would: for tests
// that check what the cache recorded, or make it look like an older or crashed one.

#include <QFile>
#include <QString>
#include <QStringList>

#include <sqlite3.h>

namespace spectrum::test {

/// Counts the blobs written without a sync that no later sync of their boot covers (what a system crash may have
/// lost): a row tagged with a boot, recorded (seq) after the last sync the index noted for that boot.
inline const QString kUnsyncedBlobs = QStringLiteral(
    "SELECT count(*) FROM blobs b WHERE unsynced IS NOT NULL"
    " AND NOT EXISTS (SELECT 1 FROM meta WHERE name = 'synced:' || b.unsynced AND value > b.seq)");

/// Runs `sql` on the index of the cache at `root`; the first column of each row it returns, as text (NULL: "").
/// A statement that fails gives {"<error: …>"}.
inline QStringList indexSql(const QString &root, const QString &sql)
{
    sqlite3 *db = nullptr;
    QStringList out;
    if (sqlite3_open_v2(QFile::encodeName(root + QStringLiteral("/index.sqlite")).constData(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
        out << QStringLiteral("<error: %1>").arg(QString::fromUtf8(sqlite3_errmsg(db)));
        sqlite3_close(db);
        return out;
    }
    sqlite3_busy_timeout(db, 10000);
    const QByteArray text = sql.toUtf8();
    const char *tail = text.constData();
    while (tail && *tail) {
        sqlite3_stmt *st = nullptr;
        if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
            out << QStringLiteral("<error: %1>").arg(QString::fromUtf8(sqlite3_errmsg(db)));
            break;
        }
        if (!st)
            break;
        int rc = SQLITE_ROW;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            const auto *p = reinterpret_cast<const char *>(sqlite3_column_text(st, 0));
            out << (p ? QString::fromUtf8(p) : QString());
        }
        if (rc != SQLITE_DONE)
            out << QStringLiteral("<error: %1>").arg(QString::fromUtf8(sqlite3_errmsg(db)));
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return out;
}

} // namespace spectrum::test

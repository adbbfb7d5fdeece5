// SPDX-License-Identifier: Apache-2.0
// FileStore's index on the disk (indexdb.h): the schema, opening and closing, rows to entries and back, changes.
// The study and series counts and searches: indexstudies.cpp.

#include "blobs/filestore/indexdb_p.h"

#include "spectrum/core/logging.h"
#include "spectrum/transfer/hashtree.h"

#include <QFile>
#include <QJsonDocument>
#include <QSet>

#include <sqlite3.h>

#include <fcntl.h>
#include <unistd.h>

namespace spectrum::cachedisk {

using namespace indexsql;

namespace {

// Bumped when the schema changes. Schema 1 (no series-level fields beyond the description) is brought up to date at
// its first open (upgradeSeries()); an index of a newer schema is refused (FileStore's open says so).
constexpr int kSchema = 2;
// The log is copied into the database past this many pages (4 KiB each).
constexpr int kCheckpointPages = 4096;

constexpr auto kColumns = "key, version, size, sha256, xxh3, tree, committed, access, unsynced, pack, offset, dicom, seq";

/// The row under `st` (selected as kColumns) as an entry.
Entry entryAt(sqlite3_stmt *st)
{
    Entry e;
    e.info.key = text(st, 0);
    e.info.version = quint64(sqlite3_column_int64(st, 1));
    e.info.size = sqlite3_column_int64(st, 2);
    e.info.sha256 = blob(st, 3);
    e.check = blob(st, 4);
    e.info.tree = blob(st, 5);
    if (!hashtree::fits(e.info.tree, e.info.size))
        e.info.tree.clear();
    completeTree(&e.info);
    e.info.committed = QDateTime::fromMSecsSinceEpoch(sqlite3_column_int64(st, 6), Qt::UTC);
    e.lastAccessMs = sqlite3_column_int64(st, 7);
    e.unsyncedBoot = text(st, 8);
    e.pack = quint64(sqlite3_column_int64(st, 9));
    e.offset = sqlite3_column_int64(st, 10);
    if (sqlite3_column_type(st, 11) != SQLITE_NULL)
        e.info.dicom = DicomIdentity::fromJson(QJsonDocument::fromJson(blob(st, 11)).object());
    e.seq = sqlite3_column_int64(st, 12);
    return e;
}

} // namespace

Error IndexDb::error(sqlite3 *db, const QString &what) const
{
    const int code = sqlite3_errcode(db);
    const QString words = QString::fromUtf8(sqlite3_errmsg(db));
    ErrorCode kind = ErrorCode::Io;
    if (code == SQLITE_FULL)
        kind = ErrorCode::DiskFull;
    else if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
        kind = ErrorCode::Corrupt;
    return Error(kind, QStringLiteral("%1 (the cache index %2): %3").arg(what, m_path, words));
}

Error IndexDb::exec(sqlite3 *db, const char *sql)
{
    char *message = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK)
        return Error();
    Error e = error(db, QString::fromUtf8(sql).section(QLatin1Char(' '), 0, 2));
    sqlite3_free(message);
    return e;
}

sqlite3_stmt *IndexDb::prepare(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = nullptr;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, nullptr) != SQLITE_OK) {
        qCWarning(lcStores) << "cache index: cannot prepare" << sql << ":" << sqlite3_errmsg(db);
        return nullptr;
    }
    m_st->owned.push_back(st);
    return st;
}

Result<std::unique_ptr<IndexDb>> IndexDb::open(const QString &path)
{
    std::unique_ptr<IndexDb> db(new IndexDb);
    db->m_path = path;
    db->m_created = !QFile::exists(path);
    const QByteArray name = QFile::encodeName(path);
    if (db->m_created) {  // made its owner's alone (SQLite's own would follow the umask); its WAL and shm follow the file
        const int fd = ::open(name.constData(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0)
            ::close(fd);
    }
    const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;  // our locks guard each connection
    for (sqlite3 **c : {&db->m_writer, &db->m_reader}) {
        if (sqlite3_open_v2(name.constData(), c, flags, nullptr) != SQLITE_OK) {
            Error e = db->error(*c, QStringLiteral("cannot open"));
            return e;
        }
        sqlite3_busy_timeout(*c, 10000);
        sqlite3_extended_result_codes(*c, 1);
    }
    // The writer first: it sets the log mode, which stays with the file; the writer checkpoints by itself.
    for (const char *sql : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA wal_autocheckpoint=0",
                            "PRAGMA foreign_keys=OFF", "PRAGMA cache_size=-8192"}) {
        if (Error e = db->exec(db->m_writer, sql); e.isError())
            return e;
    }
    // What schema the file holds, before anything in it is changed: a newer Spectrum's index is refused as it is,
    // schema 1's is brought up to date in one transaction (an interrupted upgrade is done again at the next open).
    int schema = 0;
    {
        sqlite3_stmt *st = nullptr;
        if (sqlite3_prepare_v2(db->m_writer, "SELECT value FROM meta WHERE name = 'schema'", -1, &st, nullptr) == SQLITE_OK
            && sqlite3_step(st) == SQLITE_ROW)
            schema = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);  // no meta table: a new index
    }
    if (schema > kSchema)
        return Error(ErrorCode::Corrupt, QStringLiteral("the cache index %1 is of schema %2, made by a newer Spectrum; this version reads "
                                                        "schema %3").arg(path).arg(schema).arg(kSchema));
    if (schema == 1) {
        if (Error e = db->upgradeSchema1(); e.isError())
            return e.withContext(QStringLiteral("cannot bring the cache index up to date"));
    }
    if (Error e = db->exec(db->m_writer,
                           "CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value INTEGER) WITHOUT ROWID;"
                           "CREATE TABLE IF NOT EXISTS blobs(key TEXT PRIMARY KEY NOT NULL, version INTEGER NOT NULL,"
                           " size INTEGER NOT NULL, sha256 BLOB, xxh3 BLOB, tree BLOB, committed INTEGER, access INTEGER,"
                           " use INTEGER NOT NULL, seq INTEGER NOT NULL, unsynced TEXT, pack INTEGER NOT NULL DEFAULT 0, offset INTEGER NOT NULL DEFAULT 0,"
                           " dicom TEXT, study TEXT, patient TEXT, series TEXT, sop TEXT);"
                           "CREATE INDEX IF NOT EXISTS blobs_use ON blobs(use);"
                           "CREATE INDEX IF NOT EXISTS blobs_study ON blobs(study) WHERE study IS NOT NULL;"
                           "CREATE INDEX IF NOT EXISTS blobs_sop ON blobs(sop) WHERE sop IS NOT NULL;"
                           "CREATE INDEX IF NOT EXISTS blobs_pack ON blobs(pack) WHERE pack > 0;"
                           "CREATE INDEX IF NOT EXISTS blobs_unsynced ON blobs(unsynced, seq) WHERE unsynced IS NOT NULL;"
                           "CREATE TABLE IF NOT EXISTS studies(study TEXT NOT NULL, patient TEXT NOT NULL, name TEXT,"
                           " accession TEXT, description TEXT, date TEXT, sortkey TEXT, identity TEXT,"
                           " instances INTEGER NOT NULL, bytes INTEGER NOT NULL, PRIMARY KEY(study, patient)) WITHOUT ROWID;"
                           "CREATE INDEX IF NOT EXISTS studies_newest ON studies(sortkey DESC, study);"
                           "CREATE TABLE IF NOT EXISTS series(study TEXT NOT NULL, patient TEXT NOT NULL, series TEXT NOT NULL,"
                           " modality TEXT, number INTEGER, description TEXT, instances INTEGER NOT NULL,"
                           " body TEXT, view TEXT, plane TEXT, thickness REAL,"
                           " PRIMARY KEY(study, patient, series)) WITHOUT ROWID;");
        e.isError())
        return e;
    if (Error e = db->exec(db->m_reader, "PRAGMA cache_size=-8192"); e.isError())
        return e;
    sqlite3_wal_hook(db->m_writer, [](void *self, sqlite3 *, const char *, int pages) {
        static_cast<IndexDb *>(self)->m_walPages = pages;
        return SQLITE_OK;
    }, db.get());

    db->m_st = std::make_unique<Statements>();
    Statements &s = *db->m_st;
    const QByteArray cols(kColumns);
    auto sql = [&](const QString &q) { return q.toUtf8(); };
    const QByteArray find = sql(QStringLiteral("SELECT %1 FROM blobs WHERE key = ?").arg(QLatin1String(cols)));
    const QByteArray take = sql(QStringLiteral("DELETE FROM blobs WHERE key = ? RETURNING %1").arg(QLatin1String(cols)));
    const QByteArray oldest = sql(QStringLiteral("SELECT %1 FROM blobs ORDER BY use LIMIT ?").arg(QLatin1String(cols)));
    const QByteArray unsynced("SELECT 1 FROM blobs WHERE unsynced = ? AND seq >= ? LIMIT 1");
    const QByteArray all = sql(QStringLiteral("SELECT %1 FROM blobs").arg(QLatin1String(cols)));
    sqlite3 *w = db->m_writer;
    s.find = db->prepare(db->m_reader, find.constData());
    s.seriesOf = db->prepare(db->m_reader, "SELECT series, modality, number, description, instances, body, view, plane, thickness FROM series"
                                           " WHERE study = ? AND patient = ? ORDER BY number, series");
    s.take = db->prepare(w, take.constData());
    s.insert = db->prepare(w, "INSERT INTO blobs(key, version, size, sha256, xxh3, tree, committed, access, use, unsynced, pack,"
                              " offset, dicom, study, patient, series, sop, seq) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?9)");
    s.update = db->prepare(w, "UPDATE blobs SET sha256 = ?, tree = ?, unsynced = ? WHERE key = ? AND version = ?");
    s.touch = db->prepare(w, "UPDATE blobs SET use = ?, access = ? WHERE key = ?");
    s.oldest = db->prepare(w, oldest.constData());
    s.packInUse = db->prepare(w, "SELECT 1 FROM blobs WHERE pack = ?1 AND pack > 0 LIMIT 1"  /* the partial index needs the "> 0" said */);
    s.unsynced = db->prepare(w, unsynced.constData());
    s.all = db->prepare(w, all.constData());
    s.studyAdd = db->prepare(w, "INSERT INTO studies(study, patient, name, accession, description, date, sortkey, identity, instances,"
                                " bytes) VALUES(?,?,?,?,?,?,?,?,1,?) ON CONFLICT(study, patient) DO UPDATE SET"
                                " instances = instances + 1, bytes = bytes + excluded.bytes");
    s.studySub = db->prepare(w, "UPDATE studies SET instances = instances - 1, bytes = bytes - ? WHERE study = ? AND patient = ?");
    s.studyDrop = db->prepare(w, "DELETE FROM studies WHERE study = ? AND patient = ? AND instances <= 0");
    s.seriesAdd = db->prepare(w, kSeriesAdd);
    s.seriesSub = db->prepare(w, "UPDATE series SET instances = instances - 1 WHERE study = ? AND patient = ? AND series = ?");
    s.seriesDrop = db->prepare(w, "DELETE FROM series WHERE study = ? AND patient = ? AND series = ? AND instances <= 0");
    s.meta = db->prepare(w, "INSERT INTO meta(name, value) VALUES(?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value");
    s.begin = db->prepare(w, "BEGIN IMMEDIATE");
    s.commit = db->prepare(w, "COMMIT");
    s.rollback = db->prepare(w, "ROLLBACK");
    for (sqlite3_stmt *st : {s.find, s.seriesOf, s.take, s.insert, s.update, s.touch, s.oldest, s.packInUse, s.unsynced, s.all,
                             s.studyAdd, s.studySub, s.studyDrop, s.seriesAdd, s.seriesSub, s.seriesDrop, s.meta, s.begin,
                             s.commit, s.rollback}) {
        if (!st)
            return db->error(w, QStringLiteral("cannot prepare the cache index's statements"));
    }

    // What the last close left.
    sqlite3_stmt *meta = nullptr;
    if (sqlite3_prepare_v2(w, "SELECT name, value FROM meta", -1, &meta, nullptr) != SQLITE_OK)
        return db->error(w, QStringLiteral("cannot read"));
    schema = 0;  // as the meta rows say now (after an upgrade)
    while (sqlite3_step(meta) == SQLITE_ROW) {
        const QByteArray n(reinterpret_cast<const char *>(sqlite3_column_text(meta, 0)));
        const qint64 v = sqlite3_column_int64(meta, 1);
        if (n == "schema")
            schema = int(v);
        else if (n == "clean")
            db->m_clean = v != 0;
        else if (n == "next_version")
            db->m_keptNextVersion = quint64(v);
        else if (n == "next_use")
            db->m_keptNextUse = v;
        else if (n == "bytes")
            db->m_totalBytes = v;
        else if (n == "blobs")
            db->m_blobs = v;
        else if (n.startsWith("synced:"))
            db->m_syncedBelow.insert(QString::fromLatin1(n.mid(7)), v);
    }
    sqlite3_finalize(meta);
    if (schema == 0) {
        // Made now, or by an open cut short before it recorded the schema (a journal being taken over): emptied,
        // and counted as new.
        if (Error e = db->exec(w, "DELETE FROM blobs; DELETE FROM studies; DELETE FROM series"); e.isError())
            return e;
        db->m_created = true;
        db->m_clean = false;
    }
    if (!db->m_clean) {
        db->m_totalBytes = 0;  // counted again by the check of the rows
        db->m_blobs = 0;
    }
    sqlite3_stmt *maxUse = nullptr;
    if (sqlite3_prepare_v2(w, "SELECT max(use) FROM blobs", -1, &maxUse, nullptr) == SQLITE_OK && sqlite3_step(maxUse) == SQLITE_ROW)
        db->m_nextUse = sqlite3_column_int64(maxUse, 0) + 1;
    sqlite3_finalize(maxUse);
    // The counter never goes back, even when the newest rows are gone: a row's seq below a noted sync bound would
    // count as synced. (A row's use is never below its seq, so max(use) covers the rows there; the bounds and the
    // counter kept at the last close cover the rows gone.)
    db->m_nextUse = std::max(db->m_nextUse, db->m_keptNextUse);
    for (const qint64 bound : std::as_const(db->m_syncedBelow))
        db->m_nextUse = std::max(db->m_nextUse, bound);
    return db;
}

IndexDb::~IndexDb()
{
    m_st.reset();  // statements before their connections
    if (m_walFd >= 0)
        ::close(m_walFd);
    sqlite3_close_v2(m_reader);
    sqlite3_close_v2(m_writer);
}

Error IndexDb::setMeta(const char *name, qint64 value)
{
    Using u(m_st->meta);
    sqlite3_bind_text(u.st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(u.st, 2, value);
    return sqlite3_step(u.st) == SQLITE_DONE ? Error() : error(m_writer, QStringLiteral("cannot write"));
}

Error IndexDb::markOpen()
{
    // Synced at once: an index found "clean" after a crash would skip the check of its files.
    if (Error e = exec(m_writer, "PRAGMA synchronous=FULL"); e.isError())
        return e;
    Error e = begin();
    if (!e.isError())
        e = setMeta("schema", kSchema);
    if (!e.isError())
        e = setMeta("clean", 0);
    if (!e.isError())
        e = commit();
    else
        rollback();
    exec(m_writer, "PRAGMA synchronous=NORMAL");
    return e;
}

Error IndexDb::markClosed(quint64 nextVersion)
{
    Error e = begin();
    if (!e.isError())
        e = setMeta("next_version", qint64(nextVersion));
    if (!e.isError())
        e = setMeta("next_use", m_nextUse);
    if (!e.isError())
        e = setMeta("bytes", m_totalBytes);
    if (!e.isError())
        e = setMeta("blobs", m_blobs);
    if (!e.isError())
        e = setMeta("clean", 1);
    if (!e.isError())
        e = commit();
    else
        rollback();
    if (e.isError())
        return e;
    // Everything into the database, synced (with synchronous=NORMAL a checkpoint syncs the log and the database).
    if (sqlite3_wal_checkpoint_v2(m_writer, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr) != SQLITE_OK)
        return error(m_writer, QStringLiteral("cannot write the index down"));
    return Error();
}

std::optional<Entry> IndexDb::find(const QString &key)
{
    Using u(m_st->find);
    bindText(u.st, 1, key);
    if (sqlite3_step(u.st) != SQLITE_ROW)
        return std::nullopt;
    return entryAt(u.st);
}

Result<QList<BlobInfo>> IndexDb::matching(const BlobQuery &query)
{
    // Made for each query: few are asked, and each by the fields it names (a study's instances by the study's
    // index, one instance by its SOP Instance UID's).
    QString sql = QStringLiteral("SELECT %1 FROM blobs WHERE 1").arg(QLatin1String(kColumns));
    QStringList values;
    auto where = [&](const char *column, const QString &value) {
        if (value.isEmpty())
            return;
        sql += QStringLiteral(" AND %1 = ?").arg(QLatin1String(column));
        values << value;
    };
    where("patient", query.patientId);
    where("study", query.studyInstanceUid);
    where("series", query.seriesInstanceUid);
    where("sop", query.sopInstanceUid);
    if (!query.keyPrefix.isEmpty()) {
        sql += QStringLiteral(" AND substr(key, 1, %1) = ?").arg(query.keyPrefix.toUtf8().size());
        values << query.keyPrefix;
    }
    sql += QStringLiteral(" ORDER BY key");
    if (query.limit >= 0)
        sql += QStringLiteral(" LIMIT %1").arg(query.limit);
    sqlite3_stmt *st = nullptr;
    if (sqlite3_prepare_v2(m_reader, sql.toUtf8().constData(), -1, &st, nullptr) != SQLITE_OK)
        return error(m_reader, QStringLiteral("cannot query"));
    for (int i = 0; i < values.size(); ++i)
        bindText(st, i + 1, values[i]);
    QList<BlobInfo> out;
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        out << entryAt(st).info;
    Error e = rc == SQLITE_DONE ? Error() : error(m_reader, QStringLiteral("cannot query"));
    sqlite3_finalize(st);
    if (e.isError())
        return e;
    return out;
}

Error IndexDb::begin()
{
    m_beganBytes = m_totalBytes;  // put back by a rollback
    m_beganBlobs = m_blobs;
    Using u(m_st->begin);
    return sqlite3_step(u.st) == SQLITE_DONE ? Error() : error(m_writer, QStringLiteral("cannot start a change"));
}

Error IndexDb::commit()
{
    Using u(m_st->commit);
    if (sqlite3_step(u.st) != SQLITE_DONE) {
        Error e = error(m_writer, QStringLiteral("cannot commit a change"));
        rollback();
        m_totalBytes = m_beganBytes;
        m_blobs = m_beganBlobs;
        return e;
    }
    return Error();
}

void IndexDb::rollback()
{
    if (sqlite3_get_autocommit(m_writer))
        return;  // nothing open (a failed COMMIT may have rolled back already)
    Using u(m_st->rollback);
    sqlite3_step(u.st);
    m_totalBytes = m_beganBytes;
    m_blobs = m_beganBlobs;
}

Result<std::optional<Entry>> IndexDb::take(const QString &key)
{
    std::optional<Entry> old;
    {
        Using u(m_st->take);
        bindText(u.st, 1, key);
        const int rc = sqlite3_step(u.st);
        if (rc == SQLITE_ROW) {
            old = entryAt(u.st);
            while (sqlite3_step(u.st) == SQLITE_ROW) {
            }
        } else if (rc != SQLITE_DONE) {
            return error(m_writer, QStringLiteral("cannot remove '%1'").arg(key));
        }
    }
    if (old) {
        if (Error e = count(*old, -1); e.isError())
            return e;
    }
    return old;
}

Error IndexDb::insert(const Entry &e)
{
    {
        Using u(m_st->insert);
        const DicomIdentity &id = e.info.dicom;
        bindText(u.st, 1, e.info.key);
        sqlite3_bind_int64(u.st, 2, qint64(e.info.version));
        sqlite3_bind_int64(u.st, 3, e.info.size);
        bindBlobOrNull(u.st, 4, e.info.sha256);
        bindBlobOrNull(u.st, 5, e.check);
        // A blob of one leaf has its SHA-256 as its tree: only longer trees are kept.
        bindBlobOrNull(u.st, 6, hashtree::leafCount(e.info.size) > 1 && hashtree::fits(e.info.tree, e.info.size) ? e.info.tree : QByteArray());
        sqlite3_bind_int64(u.st, 7, e.info.committed.toMSecsSinceEpoch());
        sqlite3_bind_int64(u.st, 8, e.lastAccessMs);
        sqlite3_bind_int64(u.st, 9, m_nextUse++);
        bindTextOrNull(u.st, 10, e.unsyncedBoot);
        sqlite3_bind_int64(u.st, 11, qint64(e.pack));
        sqlite3_bind_int64(u.st, 12, e.offset);
        if (id.isValid()) {
            bindText(u.st, 13, QString::fromUtf8(QJsonDocument(id.toJson()).toJson(QJsonDocument::Compact)));
            bindText(u.st, 14, id.studyInstanceUid);
            bindText(u.st, 15, id.patientId);
            bindText(u.st, 16, id.seriesInstanceUid);
            bindText(u.st, 17, id.sopInstanceUid);
        }
        if (sqlite3_step(u.st) != SQLITE_DONE)
            return error(m_writer, QStringLiteral("cannot record '%1'").arg(e.info.key));
    }
    return count(e, +1);
}

Error IndexDb::updateDescription(const Entry &e)
{
    Using u(m_st->update);
    bindBlobOrNull(u.st, 1, e.info.sha256);
    bindBlobOrNull(u.st, 2, hashtree::leafCount(e.info.size) > 1 && hashtree::fits(e.info.tree, e.info.size) ? e.info.tree : QByteArray());
    bindTextOrNull(u.st, 3, e.unsyncedBoot);
    bindText(u.st, 4, e.info.key);
    sqlite3_bind_int64(u.st, 5, qint64(e.info.version));
    return sqlite3_step(u.st) == SQLITE_DONE ? Error() : error(m_writer, QStringLiteral("cannot update '%1'").arg(e.info.key));
}

Error IndexDb::touch(const QString &key, qint64 accessMs)
{
    Using u(m_st->touch);
    sqlite3_bind_int64(u.st, 1, m_nextUse++);
    sqlite3_bind_int64(u.st, 2, accessMs);
    bindText(u.st, 3, key);
    return sqlite3_step(u.st) == SQLITE_DONE ? Error() : error(m_writer, QStringLiteral("cannot mark '%1' used").arg(key));
}

Result<QList<Entry>> IndexDb::oldest(int n)
{
    Using u(m_st->oldest);
    sqlite3_bind_int(u.st, 1, n);
    QList<Entry> out;
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(u.st)) == SQLITE_ROW)
        out << entryAt(u.st);
    if (rc != SQLITE_DONE)
        return error(m_writer, QStringLiteral("cannot read the use order"));
    return out;
}

Result<bool> IndexDb::packInUse(quint64 pack)
{
    Using u(m_st->packInUse);
    sqlite3_bind_int64(u.st, 1, qint64(pack));
    const int rc = sqlite3_step(u.st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return error(m_writer, QStringLiteral("cannot read pack %1's blobs").arg(pack));
    return rc == SQLITE_ROW;
}

Result<bool> IndexDb::anyUnsyncedUnder(const QString &boot)
{
    Using u(m_st->unsynced);
    bindText(u.st, 1, boot);
    sqlite3_bind_int64(u.st, 2, m_syncedBelow.value(boot, 0));
    const int rc = sqlite3_step(u.st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return error(m_writer, QStringLiteral("cannot read the unsynced blobs"));
    return rc == SQLITE_ROW;
}

Error IndexDb::markSynced(const QString &boot, qint64 below)
{
    const QByteArray name = "synced:" + boot.toLatin1();
    below = std::max(below, m_syncedBelow.value(boot, 0));
    if (Error e = setMeta(name.constData(), below); e.isError())
        return e;
    m_syncedBelow.insert(boot, below);
    return Error();
}

bool IndexDb::synced(const Entry &e) const
{
    return e.unsyncedBoot.isEmpty() || m_syncedBelow.value(e.unsyncedBoot, 0) > e.seq;
}

Error IndexDb::upgradeSchema1()
{
    // One transaction: the columns, the series counted again from the rows with their fields, the schema noted.
    if (Error e = exec(m_writer, "BEGIN IMMEDIATE"); e.isError())
        return e;
    Error e;
    for (const char *column : {"body TEXT", "view TEXT", "plane TEXT", "thickness REAL"}) {
        const QByteArray name = QByteArray(column).split(' ').first();
        sqlite3_stmt *has = nullptr;
        bool there = false;
        if (sqlite3_prepare_v2(m_writer, "SELECT count(*) FROM pragma_table_info('series') WHERE name = ?", -1, &has, nullptr) == SQLITE_OK) {
            sqlite3_bind_text(has, 1, name.constData(), int(name.size()), SQLITE_TRANSIENT);
            there = sqlite3_step(has) == SQLITE_ROW && sqlite3_column_int(has, 0) > 0;
        }
        sqlite3_finalize(has);
        if (!there)
            e = exec(m_writer, (QByteArray("ALTER TABLE series ADD COLUMN ") + column).constData());
        if (e.isError())
            break;
    }
    if (!e.isError())
        e = exec(m_writer, "DELETE FROM series");
    sqlite3_stmt *rows = nullptr, *add = nullptr;
    if (!e.isError() && (sqlite3_prepare_v2(m_writer, "SELECT dicom FROM blobs WHERE dicom IS NOT NULL", -1, &rows, nullptr) != SQLITE_OK
                         || sqlite3_prepare_v2(m_writer, kSeriesAdd, -1, &add, nullptr) != SQLITE_OK))
        e = error(m_writer, QStringLiteral("cannot read"));
    int rc = SQLITE_DONE;
    while (!e.isError() && (rc = sqlite3_step(rows)) == SQLITE_ROW) {
        const DicomIdentity id = DicomIdentity::fromJson(QJsonDocument::fromJson(blob(rows, 0)).object());
        if (id.isValid())
            e = addSeries(add, id);
    }
    if (!e.isError() && rc != SQLITE_DONE)
        e = error(m_writer, QStringLiteral("cannot read"));
    sqlite3_finalize(rows);
    sqlite3_finalize(add);
    if (!e.isError())
        e = exec(m_writer, "UPDATE meta SET value = 2 WHERE name = 'schema'");
    if (!e.isError())
        e = exec(m_writer, "COMMIT");
    if (e.isError())
        exec(m_writer, "ROLLBACK");
    return e;
}

Error IndexDb::forEach(const std::function<void(const Entry &)> &visit)
{
    Using u(m_st->all);
    int rc = SQLITE_ROW;
    m_totalBytes = 0;
    m_blobs = 0;
    while ((rc = sqlite3_step(u.st)) == SQLITE_ROW) {
        const Entry e = entryAt(u.st);
        m_totalBytes += e.info.size;
        ++m_blobs;
        visit(e);
    }
    return rc == SQLITE_DONE ? Error() : error(m_writer, QStringLiteral("cannot read"));
}

int IndexDb::walFd()
{
    if (m_walFd < 0)
        m_walFd = ::open(QFile::encodeName(m_path + QStringLiteral("-wal")).constData(), O_RDONLY | O_CLOEXEC);
    return m_walFd;
}

void IndexDb::checkpointIfLarge()
{
    if (m_walPages < kCheckpointPages)
        return;
    int logged = 0, copied = 0;
    if (sqlite3_wal_checkpoint_v2(m_writer, nullptr, SQLITE_CHECKPOINT_PASSIVE, &logged, &copied) != SQLITE_OK)
        qCWarning(lcStores) << "cache index: checkpoint failed:" << sqlite3_errmsg(m_writer);
    m_walPages = logged > copied ? logged : 0;
}

} // namespace spectrum::cachedisk

// SPDX-License-Identifier: Apache-2.0
// FileStore's index (indexdb.h): the study and series counts kept beside the rows in the same transactions, and the
// study searches answered from them.

#include "blobs/filestore/indexdb_p.h"

#include <QJsonDocument>

namespace spectrum::cachedisk {

using namespace indexsql;

namespace {

/// The study- and patient-level part of an instance's identity.
DicomIdentity studyLevel(const DicomIdentity &id)
{
    DicomIdentity s;
    s.patientName = id.patientName;
    s.patientId = id.patientId;
    s.issuerOfPatientId = id.issuerOfPatientId;
    s.patientBirthDate = id.patientBirthDate;
    s.patientSex = id.patientSex;
    s.studyInstanceUid = id.studyInstanceUid;
    s.studyDate = id.studyDate;
    s.studyTime = id.studyTime;
    s.studyDescription = id.studyDescription;
    s.accessionNumber = id.accessionNumber;
    return s;
}


/// spectrum_study_matches(name, patient id, accession, description, date): DicomQuery::matchesStudy on a row of
/// `studies` (the modality is matched afterwards, over the series).
void studyMatches(sqlite3_context *ctx, int, sqlite3_value **v)
{
    const auto *studyFields = static_cast<const DicomQuery *>(sqlite3_user_data(ctx));
    auto str = [&](int i) {
        const auto *p = reinterpret_cast<const char *>(sqlite3_value_text(v[i]));
        return p ? QString::fromUtf8(p, sqlite3_value_bytes(v[i])) : QString();
    };
    DicomIdentity id;
    id.patientName = str(0);
    id.patientId = str(1);
    id.accessionNumber = str(2);
    id.studyDescription = str(3);
    id.studyDate = str(4);
    sqlite3_result_int(ctx, studyFields->matchesStudy(id, {}) ? 1 : 0);
}


} // namespace

Result<QList<StudySummary>> IndexDb::studies(const DicomQuery &query)
{
    const DicomQuery &q = query;
    DicomQuery studyFields = query;
    studyFields.modality.clear();          // matched over the series, below
    studyFields.studyInstanceUid.clear();  // matched by the statement
    const bool anyField = !q.patientName.isEmpty() || !q.patientId.isEmpty() || !q.accessionNumber.isEmpty()
        || !q.description.isEmpty() || q.dateFrom.isValid() || q.dateTo.isValid();
    if (anyField && sqlite3_create_function_v2(m_reader, "spectrum_study_matches", 5, SQLITE_UTF8 | SQLITE_DETERMINISTIC, &studyFields,
                                               studyMatches, nullptr, nullptr, nullptr) != SQLITE_OK)
        return error(m_reader, QStringLiteral("cannot search"));
    QString sql = QStringLiteral("SELECT study, patient, identity, instances, bytes,"
                                 " (SELECT count(*) FROM studies o WHERE o.study = s.study) FROM studies s WHERE 1");
    if (anyField)
        sql += QStringLiteral(" AND spectrum_study_matches(name, patient, accession, description, date)");
    if (!q.studyInstanceUid.isEmpty())
        sql += QStringLiteral(" AND study = ?1");
    sql += QStringLiteral(" ORDER BY sortkey DESC, study");
    sqlite3_stmt *st = nullptr;
    if (sqlite3_prepare_v2(m_reader, sql.toUtf8().constData(), -1, &st, nullptr) != SQLITE_OK)
        return error(m_reader, QStringLiteral("cannot search"));
    if (!q.studyInstanceUid.isEmpty())
        bindText(st, 1, q.studyInstanceUid);
    QList<StudySummary> out;
    int skip = std::max(0, q.offset);
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        StudySummary s;
        s.identity = DicomIdentity::fromJson(QJsonDocument::fromJson(blob(st, 2)).object());
        s.identity.studyInstanceUid = text(st, 0);
        s.identity.patientId = text(st, 1);
        s.instanceCount = sqlite3_column_int(st, 3);
        s.bytes = sqlite3_column_int64(st, 4);
        s.identityConflict = sqlite3_column_int(st, 5) > 1;
        {
            Using series(m_st->seriesOf);
            bindText(series.st, 1, s.identity.studyInstanceUid);
            bindText(series.st, 2, s.identity.patientId);
            while (sqlite3_step(series.st) == SQLITE_ROW) {
                SeriesSummary x;
                x.seriesInstanceUid = text(series.st, 0);
                x.modality = text(series.st, 1);
                x.seriesNumber = sqlite3_column_int(series.st, 2);
                x.description = text(series.st, 3);
                x.listedInstances = sqlite3_column_int(series.st, 4);
                x.bodyPart = text(series.st, 5);
                x.viewPosition = text(series.st, 6);
                x.plane = text(series.st, 7);
                x.sliceThickness = sqlite3_column_double(series.st, 8);
                if (!x.modality.isEmpty() && !s.modalities.contains(x.modality))
                    s.modalities << x.modality;
                s.series << x;
            }
        }
        if (!q.modality.isEmpty() && !s.modalities.contains(q.modality, Qt::CaseInsensitive))
            continue;
        if (skip > 0) {
            --skip;
            continue;
        }
        out << s;
        if (q.limit > 0 && out.size() >= q.limit)
            break;
    }
    Error e = rc == SQLITE_DONE || rc == SQLITE_ROW ? Error() : error(m_reader, QStringLiteral("cannot search"));
    sqlite3_finalize(st);
    if (anyField)
        sqlite3_create_function_v2(m_reader, "spectrum_study_matches", 5, SQLITE_UTF8, nullptr, nullptr, nullptr, nullptr, nullptr);
    if (e.isError())
        return e;
    return out;
}


Error IndexDb::addSeries(const DicomIdentity &id)
{
    return addSeries(m_st->seriesAdd, id);
}

Error IndexDb::addSeries(sqlite3_stmt *statement, const DicomIdentity &id)
{
    Using x(statement);
    bindText(x.st, 1, id.studyInstanceUid);
    bindText(x.st, 2, id.patientId);
    bindText(x.st, 3, id.seriesInstanceUid);
    bindText(x.st, 4, id.modality);
    sqlite3_bind_int(x.st, 5, id.seriesNumber);
    bindText(x.st, 6, id.seriesDescription);
    bindText(x.st, 7, id.bodyPartExamined);
    bindText(x.st, 8, id.viewPosition);
    bindText(x.st, 9, DicomIdentity::planeOf(id.imageOrientation, true));
    sqlite3_bind_double(x.st, 10, id.sliceThickness.toDouble());
    if (sqlite3_step(x.st) != SQLITE_DONE)
        return error(m_writer, QStringLiteral("cannot count a series"));
    return Error();
}

Error IndexDb::count(const Entry &e, int sign)
{
    m_totalBytes += sign * e.info.size;
    m_blobs += sign;
    const DicomIdentity &id = e.info.dicom;
    if (!id.isValid())
        return Error();
    if (sign > 0) {
        const DicomIdentity study = studyLevel(id);
        Using s(m_st->studyAdd);
        bindText(s.st, 1, id.studyInstanceUid);
        bindText(s.st, 2, id.patientId);
        bindText(s.st, 3, id.patientName);
        bindText(s.st, 4, id.accessionNumber);
        bindText(s.st, 5, id.studyDescription);
        bindText(s.st, 6, id.studyDate);
        bindText(s.st, 7, id.studyDate + id.studyTime);
        bindText(s.st, 8, QString::fromUtf8(QJsonDocument(study.toJson()).toJson(QJsonDocument::Compact)));
        sqlite3_bind_int64(s.st, 9, e.info.size);
        if (sqlite3_step(s.st) != SQLITE_DONE)
            return error(m_writer, QStringLiteral("cannot count a study"));
        return addSeries(id);
    }
    for (sqlite3_stmt *st : {m_st->studySub, m_st->studyDrop}) {
        Using s(st);
        int i = 1;
        if (st == m_st->studySub)
            sqlite3_bind_int64(s.st, i++, e.info.size);
        bindText(s.st, i++, id.studyInstanceUid);
        bindText(s.st, i++, id.patientId);
        if (sqlite3_step(s.st) != SQLITE_DONE)
            return error(m_writer, QStringLiteral("cannot count a study"));
    }
    for (sqlite3_stmt *st : {m_st->seriesSub, m_st->seriesDrop}) {
        Using s(st);
        bindText(s.st, 1, id.studyInstanceUid);
        bindText(s.st, 2, id.patientId);
        bindText(s.st, 3, id.seriesInstanceUid);
        if (sqlite3_step(s.st) != SQLITE_DONE)
            return error(m_writer, QStringLiteral("cannot count a series"));
    }
    return Error();
}


} // namespace spectrum::cachedisk

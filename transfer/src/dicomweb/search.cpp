// SPDX-License-Identifier: Apache-2.0
// QIDO-RS searches and WADO-RS metadata: the query as parameters, the DICOM JSON answer read into records on the
// pool.

#include "dicomweb/httpjob.h"

#include "spectrum/core/logging.h"
#include "spectrum/core/uid.h"
#include "spectrum/transfer/multipart.h"

#include "httpstream.h"
#include "partbuffer.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QPointer>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QUrlQuery>

#include <QMutex>
#include <QScopeGuard>

#include <atomic>
#include <cmath>
#include <cstring>
#include <deque>
#include <future>

namespace spectrum {

using namespace webwire;

// ---- DICOM JSON ----

namespace dicomjson {

namespace {
QString text(const QJsonValue &v)
{
    if (v.isString())
        return v.toString();
    if (v.isDouble()) {
        const double d = v.toDouble();
        return d == double(qint64(d)) ? QString::number(qint64(d)) : QString::number(d);
    }
    if (v.isObject()) {
        // PN: {"Alphabetic": "Yamada^Tarou", "Ideographic": "山田^太郎", "Phonetic": "やまだ^たろう"} — the whole name,
        // its groups joined as the DICOM value joins them (a name written in two alphabets is not cut to one),
        // empty trailing components and groups left off (PS3.5 6.2.1: "^" is an empty name).
        const QJsonObject pn = v.toObject();
        QStringList groups;
        for (const char *group : {"Alphabetic", "Ideographic", "Phonetic"}) {
            QString g = pn.value(QLatin1String(group)).toString();
            while (g.endsWith(QLatin1Char('^')))
                g.chop(1);
            groups << g;
        }
        while (!groups.isEmpty() && groups.last().isEmpty())
            groups.removeLast();
        return groups.join(QLatin1Char('='));
    }
    return {};
}
} // namespace

QStringList strings(const QJsonObject &object, const char *tag)
{
    QStringList out;
    for (const QJsonValue &v : object.value(QLatin1String(tag)).toObject().value(QStringLiteral("Value")).toArray())
        out << text(v);
    return out;
}

QString string(const QJsonObject &object, const char *tag)
{
    return strings(object, tag).value(0);
}

namespace {
/// `count` numbers (a DS value) as DicomIdentity keeps them: joined by '\\', 10 significant digits; empty when the
/// answer has another count or a value that is not a number.
QString numbers(const QJsonObject &object, const char *tag, int count)
{
    const QJsonArray values = object.value(QLatin1String(tag)).toObject().value(QStringLiteral("Value")).toArray();
    if (values.size() != count)
        return {};
    QStringList out;
    for (const QJsonValue &v : values) {
        bool ok = v.isDouble();
        const double d = ok ? v.toDouble() : v.toString().trimmed().toDouble(&ok);
        if (!ok || !std::isfinite(d))
            return {};
        out << QString::number(d, 'g', 10);
    }
    return out.join(QLatin1Char('\\'));
}
} // namespace

DicomRecord record(const QJsonObject &o, QueryLevel level)
{
    DicomRecord r;
    r.level = level;
    DicomIdentity &id = r.identity;
    id.patientName = string(o, "00100010");
    id.patientId = string(o, "00100020");
    id.issuerOfPatientId = string(o, "00100021");
    id.patientBirthDate = string(o, "00100030");
    id.patientSex = string(o, "00100040");
    id.studyInstanceUid = string(o, "0020000D");
    id.studyDate = string(o, "00080020");
    id.studyTime = string(o, "00080030");
    id.studyDescription = string(o, "00081030");
    id.accessionNumber = string(o, "00080050");
    id.seriesInstanceUid = string(o, "0020000E");
    id.modality = string(o, "00080060");
    id.seriesDescription = string(o, "0008103E");
    id.bodyPartExamined = string(o, "00180015");
    id.seriesNumber = string(o, "00200011").toInt();
    id.sopInstanceUid = string(o, "00080018");
    id.sopClassUid = string(o, "00080016");
    id.instanceNumber = string(o, "00200013").toInt();
    // Where an instance lies, when the archive says (asked for at the instance level): a volume can be laid out
    // before its slices arrive.
    id.imagePosition = numbers(o, "00200032", 3);
    id.imageOrientation = numbers(o, "00200037", 6);
    id.frameOfReferenceUid = string(o, "00200052");
    id.sliceThickness = numbers(o, "00180050", 1);
    r.modalitiesInStudy = strings(o, "00080061");
    bool ok = false;
    if (const int n = string(o, "00201206").toInt(&ok); ok)
        r.relatedSeries = n;
    const char *instancesTag = level == QueryLevel::Study ? "00201208" : "00201209";
    if (const int n = string(o, instancesTag).toInt(&ok); ok)
        r.relatedInstances = n;
    r.retrieveUrl = string(o, "00081190");
    return r;
}

} // namespace dicomjson

namespace {

class SearchJob : public HttpJob<QList<DicomRecord>>
{
public:
    SearchJob(DicomWebClient *c, QNetworkRequest r, QueryLevel level)
        : HttpJob(c, "GET", std::move(r), {}, QStringLiteral("QIDO-RS search")), m_level(level) {}

protected:
    Error explained(const Error &e, int status) const override
    {
        // A DICOMweb root answers a search of studies; another API under the same server refuses or lacks it.
        if (m_level == QueryLevel::Study && (status == 400 || status == 404 || status == 405))
            return Error(e.code(), e.message() + QStringLiteral(" — is %1 the server's DICOMweb root? (Orthanc's is http://HOST:8042/dicom-web)")
                                                     .arg(client()->endpoint().base.toString(QUrl::RemoveUserInfo)));
        return e;
    }

    Error unexpected(QNetworkReply *reply) const override
    {
        // QIDO-RS answers application/dicom+json (some servers say application/json). A web page, an image or a
        // login form is not the start of a long list: said now, not after reading it to its end.
        const QString type = reply->header(QNetworkRequest::ContentTypeHeader).toString().section(QLatin1Char(';'), 0, 0).trimmed().toLower();
        if (type.isEmpty() || type.endsWith(QLatin1String("json")))
            return Error();
        return Error(ErrorCode::Protocol, QStringLiteral("QIDO-RS search: the server answered %1, not DICOM JSON — is %2 the server's DICOMweb root? "
                                                         "(Orthanc's is http://HOST:8042/dicom-web)")
                                              .arg(type, client()->endpoint().base.toString(QUrl::RemoveUserInfo)));
    }

    void done(int status, const QByteArray &answer, QNetworkReply *) override
    {
        if (status == 204 || answer.trimmed().isEmpty())
            return finishWith(QList<DicomRecord>());
        // Parsed on the pool: the listing of a 300-instance study held the caller's event loop for 20–30 ms.
        const QString root = client()->endpoint().base.toString(QUrl::RemoveUserInfo);
        runOnPool<Result<QList<DicomRecord>>>(blockingPool(), this, [answer, level = m_level, root]() -> Result<QList<DicomRecord>> {
            QJsonParseError e{};
            const QJsonDocument doc = QJsonDocument::fromJson(answer, &e);
            const QString notTheRoot = QStringLiteral(" — is %1 the server's DICOMweb root? (Orthanc's is http://HOST:8042/dicom-web)").arg(root);
            if (!doc.isArray())
                return Error(ErrorCode::Protocol, QStringLiteral("QIDO-RS: the answer is not a DICOM JSON array (%1)%2").arg(e.errorString(), notTheRoot));
            QList<DicomRecord> out;
            for (const QJsonValue &v : doc.array()) {
                // DICOM JSON: an object of tags (8 hex digits). Anything else is another API's answer (Orthanc's
                // own REST lists IDs at /studies): never records without identity, shown as a blank study.
                const QJsonObject o = v.toObject();
                const QString first = o.isEmpty() ? QString() : o.begin().key();
                bool hex = first.size() == 8;
                first.toUInt(&hex, 16);
                if (!v.isObject() || (!o.isEmpty() && (first.size() != 8 || !hex)))
                    return Error(ErrorCode::Protocol, QStringLiteral("QIDO-RS: the answer is JSON but not DICOM JSON%1").arg(notTheRoot));
                out << dicomjson::record(o, level);
            }
            return out;
        }, [this](Result<QList<DicomRecord>> &&r) {
            if (!isFinished())
                finishWith(r);
        });
    }

private:
    QueryLevel m_level;
};

class JsonJob : public HttpJob<QJsonArray>
{
public:
    using HttpJob::HttpJob;

protected:
    void done(int, const QByteArray &answer, QNetworkReply *) override
    {
        const QJsonDocument doc = QJsonDocument::fromJson(answer);
        if (!doc.isArray())
            return finishWith(Error(ErrorCode::Protocol, QStringLiteral("%1: the answer is not a JSON array").arg(m_what)));
        finishWith(doc.array());
    }
};

} // namespace

ResultJob<QList<DicomRecord>> *DicomWebClient::search(const DicomQuery &q)
{
    if (Error e = q.validate(); e.isError())
        return failedJob<QList<DicomRecord>>(e);
    QString path;
    QList<QPair<QString, QString>> params;
    auto add = [&](const char *key, const QString &value) {
        if (!value.isEmpty())
            params.append({QLatin1String(key), value});
    };
    switch (q.level) {
    case QueryLevel::Patient:
        return makeJob<QList<DicomRecord>>([](const CancelToken &) -> Result<QList<DicomRecord>> {
            return Error(ErrorCode::Unsupported, QStringLiteral("QIDO-RS has no patient level: search studies by patient name or ID"));
        }, RunOn::Caller);
    case QueryLevel::Study:
        path = QStringLiteral("studies");
        add("ModalitiesInStudy", q.modality);
        add("StudyDescription", q.description);
        add("StudyInstanceUID", q.studyInstanceUid);
        params.append({QStringLiteral("includefield"), QStringLiteral("00100021,00081030,00080061,00201206,00201208")});
        break;
    case QueryLevel::Series:
        path = q.studyInstanceUid.isEmpty() ? QStringLiteral("series") : QStringLiteral("studies/%1/series").arg(q.studyInstanceUid);
        add("Modality", q.modality);
        add("SeriesDescription", q.description);
        add("SeriesInstanceUID", q.seriesInstanceUid);
        params.append({QStringLiteral("includefield"), QStringLiteral("00100021,00081030,0008103E,00180015,00200011,00201209")});
        break;
    case QueryLevel::Instance:
        path = q.seriesInstanceUid.isEmpty() ? QStringLiteral("studies/%1/instances").arg(q.studyInstanceUid)
                                             : QStringLiteral("studies/%1/series/%2/instances").arg(q.studyInstanceUid, q.seriesInstanceUid);
        add("Modality", q.modality);
        if (q.instanceNumber > 0)
            add("InstanceNumber", QString::number(q.instanceNumber));
        // Where each instance lies too (position, orientation, frame of reference, thickness): linked panes and MPR
        // place slices that have not arrived yet.
        params.append({QStringLiteral("includefield"), QStringLiteral("00200013,00080016,00200032,00200037,00200052,00180050")});
        break;
    }
    add("PatientName", q.patientName);
    add("PatientID", q.patientId);
    add("AccessionNumber", q.accessionNumber);
    add("StudyDate", q.dicomDateRange());
    if (q.limit > 0)
        add("limit", QString::number(q.limit));
    if (q.offset > 0)
        add("offset", QString::number(q.offset));
    QNetworkRequest r = request(path, params);
    r.setRawHeader("Accept", "application/dicom+json");
    return new SearchJob(this, r, q.level);
}

ResultJob<QJsonArray> *DicomWebClient::metadata(const QString &studyUid, const QString &seriesUid, const QString &sopUid)
{
    QString path = QStringLiteral("studies/") + studyUid;
    if (!seriesUid.isEmpty())
        path += QStringLiteral("/series/") + seriesUid;
    if (!sopUid.isEmpty())
        path += QStringLiteral("/instances/") + sopUid;
    QNetworkRequest r = request(path + QStringLiteral("/metadata"));
    r.setRawHeader("Accept", "application/dicom+json");
    return new JsonJob(this, "GET", r, {}, QStringLiteral("WADO-RS metadata"));
}

} // namespace spectrum

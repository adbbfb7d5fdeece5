// SPDX-License-Identifier: Apache-2.0
// STOW-RS: instances sent as one multipart request; the answer says which were stored and which failed.

#include "dicomweb/httpjob.h"

#include "spectrum/core/logging.h"
#include "spectrum/core/uid.h"
#include "spectrum/transfer/multipart.h"

#include "httpstream.h"
#include "partbuffer.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
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
#include <cstring>
#include <deque>
#include <future>

namespace spectrum {

using namespace webwire;

namespace {

class StowJob : public HttpJob<StowResult>
{
public:
    StowJob(DicomWebClient *c, QNetworkRequest r, QByteArray body, int sent)
        : HttpJob(c, "POST", std::move(r), std::move(body), QStringLiteral("STOW-RS")), m_sent(sent) {}

protected:
    bool answersDespite(int status, const QByteArray &answer) const override
    {
        // 400 / 409: some or all instances refused, said per instance in the response dataset.
        if (status != 400 && status != 409)
            return false;
        const QJsonDocument doc = QJsonDocument::fromJson(answer);
        const QJsonObject o = doc.isArray() ? doc.array().at(0).toObject() : doc.object();
        return o.contains(QStringLiteral("00081199")) || o.contains(QStringLiteral("00081198"));
    }

    void done(int, const QByteArray &answer, QNetworkReply *) override
    {
        const QJsonDocument doc = QJsonDocument::fromJson(answer);
        // Some servers wrap the response dataset in an array.
        const QJsonObject o = doc.isArray() ? doc.array().at(0).toObject() : doc.object();
        if (o.isEmpty())
            return finishWith(Error(ErrorCode::Protocol, QStringLiteral("STOW-RS: the answer is not a DICOM JSON response")));
        StowResult r;
        for (const QJsonValue &item : o.value(QStringLiteral("00081199")).toObject().value(QStringLiteral("Value")).toArray()) {
            r.stored << dicomjson::string(item.toObject(), "00081155");
            const QString warning = dicomjson::string(item.toObject(), "00081196");
            if (!warning.isEmpty())
                r.warnings << QStringLiteral("%1: warning %2").arg(r.stored.last(), warning);
        }
        for (const QJsonValue &item : o.value(QStringLiteral("00081198")).toObject().value(QStringLiteral("Value")).toArray())
            r.failed.append({dicomjson::string(item.toObject(), "00081155"), dicomjson::string(item.toObject(), "00081197").toInt()});
        r.sent = m_sent;
        finishWith(r);
    }

private:
    int m_sent;
};

} // namespace

ResultJob<StowResult> *DicomWebClient::store(const QList<ByteView> &instances)
{
    const QByteArray boundary = "spectrum-" + QByteArray::number(QDateTime::currentMSecsSinceEpoch()) + "-" + QByteArray::number(quintptr(this), 16);
    QByteArray body;
    qint64 total = 0;
    for (const ByteView &i : instances)
        total += i.size() + 128;
    body.reserve(total + 64);
    for (const ByteView &i : instances) {
        body += "--" + boundary + "\r\nContent-Type: application/dicom\r\nContent-Length: " + QByteArray::number(i.size()) + "\r\n\r\n";
        body.append(i.data(), i.size());
        body += "\r\n";
    }
    body += "--" + boundary + "--\r\n";
    QNetworkRequest r = request(QStringLiteral("studies"));
    r.setRawHeader("Content-Type", "multipart/related; type=\"application/dicom\"; boundary=" + boundary);
    r.setRawHeader("Accept", "application/dicom+json");
    return new StowJob(this, r, body, int(instances.size()));
}

} // namespace spectrum

#include "spectrum/transfer/dicomweb.h"

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
    if (v.isObject())  // PN: {"Alphabetic": "DOE^JOHN"}
        return v.toObject().value(QStringLiteral("Alphabetic")).toString();
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

DicomRecord record(const QJsonObject &o, QueryLevel level)
{
    DicomRecord r;
    r.level = level;
    DicomIdentity &id = r.identity;
    id.patientName = string(o, "00100010");
    id.patientId = string(o, "00100020");
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
    id.seriesNumber = string(o, "00200011").toInt();
    id.sopInstanceUid = string(o, "00080018");
    id.sopClassUid = string(o, "00080016");
    id.instanceNumber = string(o, "00200013").toInt();
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

// ---- client ----

namespace {

constexpr int kConnectionsPerManager = 6;  // Qt 6.4's fixed HTTP/1.1 limit per host and manager

Error httpError(int status, const QByteArray &body, const QString &what)
{
    const QString detail = QString::fromUtf8(body.left(200)).simplified();
    const QString message = QStringLiteral("%1: the server answered HTTP %2%3").arg(what).arg(status).arg(detail.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(detail));
    switch (status) {
    case 401:
    case 403:
        return Error(ErrorCode::Authentication, message);
    case 404:
        return Error(ErrorCode::NotFound, message);
    case 400:
    case 406:
    case 415:
        return Error(ErrorCode::InvalidArgument, message);
    default:
        return Error(ErrorCode::Network, message);
    }
}

/// One HTTP exchange as a job: admission under the client's parallel limit, authentication (with one refresh
/// on 401), timeouts, cancel. Subclasses look at the answer.
template <typename T>
class HttpJob : public ResultJob<T>
{
public:
    HttpJob(DicomWebClient *client, QByteArray verb, QNetworkRequest request, QByteArray body, QString what)
        : m_what(std::move(what)), m_client(client), m_verb(std::move(verb)), m_request(std::move(request)), m_body(std::move(body))
    {
        // Owned by its client: a job whose client goes (the fetch that made both was cancelled) goes with it,
        // instead of waiting for an answer that will never come.
        this->setParent(client);
    }

protected:
    void doStart() override { send(); }

    void doCancel() override { abortReply(); }

    void abortReply()
    {
        if (m_reply) {
            QObject::disconnect(m_reply, nullptr, this, nullptr);
            m_reply->abort();
            m_reply->deleteLater();
            m_reply = nullptr;
        }
    }

    /// Bytes of a successful (2xx) answer as they arrive; default: kept for done().
    virtual void received(QNetworkReply *reply) { m_answer += reply->readAll(); }
    /// The whole exchange is over with a 2xx status (or one answersDespite() took).
    virtual void done(int status, const QByteArray &answer, QNetworkReply *reply) = 0;
    /// Whether an error status still carries an answer to look at (STOW-RS's per-instance report).
    virtual bool answersDespite(int status, const QByteArray &answer) const { Q_UNUSED(status) Q_UNUSED(answer) return false; }

    int status(QNetworkReply *reply) const { return reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(); }
    const QNetworkRequest &request() const { return m_request; }
    void setRequestHeader(const QByteArray &name, const QByteArray &value) { m_request.setRawHeader(name, value); }
    DicomWebClient *client() const { return m_client; }

    QString m_what;

private:
    void send()
    {
        m_answer.clear();
        m_reply = m_client->nextManager()->sendCustomRequest(m_request, m_verb, m_body);
        QObject::connect(m_reply, &QNetworkReply::readyRead, this, [this] {
            const int s = status(m_reply);
            if (s >= 200 && s < 300)
                received(m_reply);
            else
                m_answer += m_reply->readAll();  // an error text, for the message
        });
        QObject::connect(m_reply, &QNetworkReply::finished, this, [this] { finishedReply(); });
    }

    void finishedReply()
    {
        QNetworkReply *reply = m_reply;
        m_reply = nullptr;
        reply->deleteLater();
        const int s = status(reply);
        if (s >= 200 && s < 300 && reply->bytesAvailable() > 0)
            received(reply);
        const HttpAuth &auth = m_client->endpoint().auth;
        if (s == 401 && auth.kind == HttpAuth::Kind::Bearer && auth.refresh && !m_refreshed) {
            m_refreshed = true;
            Result<QString> token = auth.refresh();
            if (!token.isOk())
                return this->finishWith(Error(ErrorCode::Authentication, QStringLiteral("%1: the token was refused and could not be refreshed: %2").arg(m_what, token.error().message())));
            m_request.setRawHeader("Authorization", "Bearer " + token.value().toUtf8());
            return send();
        }
        if (s == 0) {
            const bool timeout = reply->error() == QNetworkReply::OperationCanceledError || reply->error() == QNetworkReply::TimeoutError;
            return this->finishWith(Error(timeout ? ErrorCode::Timeout : ErrorCode::Network,
                                          QStringLiteral("%1: %2").arg(m_what, timeout ? QStringLiteral("no answer within %1 ms").arg(m_client->endpoint().timeoutMs) : reply->errorString())));
        }
        if ((s < 200 || s >= 300) && !answersDespite(s, m_answer))
            return this->finishWith(httpError(s, m_answer, m_what));
        if (s >= 200 && s < 300 && reply->error() != QNetworkReply::NoError)  // 2xx but cut short
            return this->finishWith(Error(ErrorCode::Network, QStringLiteral("%1: the answer broke off: %2").arg(m_what, reply->errorString())));
        done(s, m_answer, reply);
    }

    QPointer<DicomWebClient> m_client;
    QByteArray m_verb;
    QNetworkRequest m_request;
    QByteArray m_body;
    QPointer<QNetworkReply> m_reply;  ///< its manager may go first (both belong to the client)
    QByteArray m_answer;
    bool m_refreshed = false;
};

class SearchJob : public HttpJob<QList<DicomRecord>>
{
public:
    SearchJob(DicomWebClient *c, QNetworkRequest r, QueryLevel level)
        : HttpJob(c, "GET", std::move(r), {}, QStringLiteral("QIDO-RS search")), m_level(level) {}

protected:
    void done(int status, const QByteArray &answer, QNetworkReply *) override
    {
        if (status == 204 || answer.trimmed().isEmpty())
            return finishWith(QList<DicomRecord>());
        // Parsed on the pool: the listing of a 300-instance study held the caller's event loop for 20–30 ms.
        runOnPool<Result<QList<DicomRecord>>>(blockingPool(), this, [answer, level = m_level]() -> Result<QList<DicomRecord>> {
            QJsonParseError e{};
            const QJsonDocument doc = QJsonDocument::fromJson(answer, &e);
            if (!doc.isArray())
                return Error(ErrorCode::Protocol, QStringLiteral("QIDO-RS: the answer is not a DICOM JSON array (%1)").arg(e.errorString()));
            QList<DicomRecord> out;
            for (const QJsonValue &v : doc.array())
                out << dicomjson::record(v.toObject(), level);
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

/// Whether a request can go straight to the socket (httpstream.h): plain HTTP with no proxy to go through.
bool canStreamDirectly(const QUrl &url)
{
    if (url.scheme() != QLatin1String("http") || QNetworkProxy::applicationProxy().type() != QNetworkProxy::NoProxy)
        return false;
    for (const char *var : {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"})
        if (!qEnvironmentVariableIsEmpty(var))
            return false;
    return true;
}

/// A WADO-RS answer read straight from the socket on a thread of its own (httpstream.h): each part is read into
/// its own buffer (reserved from its Content-Length) and posted whole to the job's thread; an error answer's
/// text is kept for the message.
class DirectMultipart : public HttpBodyConsumer
{
public:
    /// A complete part, on the job's thread. Its error stops the retrieval.
    std::function<void(WadoPart, QByteArray)> onPart;
    /// Or handled here, on the reading thread (RetrieveCallbacks::completeOnReader); counted below.
    std::function<Error(const WadoPart &, const ByteView &)> onPartHere;
    /// What has arrived of a part that declared its length, on the reading thread, after each read into it.
    std::function<void(const WadoPart &, const Arrival &)> onArrival;
    int partsHere = 0;  ///< read once the reader is joined
    qint64 bytesHere = 0;

    int status = 0;
    QByteArray errorText;  ///< the body of a non-2xx answer (the first 64 KiB)
    bool sawMultipart = false;

    Error head(const HttpHead &h) override
    {
        status = h.status;
        if (status < 200 || status >= 300 || status == 204)
            return Error();
        Result<QByteArray> boundary = MultipartReader::boundaryOf(h.value("content-type"));
        if (!boundary.isOk())
            return Error(ErrorCode::Protocol, boundary.error().message());
        sawMultipart = true;
        m_reader = std::make_unique<MultipartReader>(boundary.value());
        m_reader->onPartBegin = [this](int index, const MultipartHeaders &headers) { m_part = m_bytes.begin(index, headers); };
        m_reader->onPartData = [this](int, const char *data, qint64 n) {
            if (!m_bytes.append(data, n))
                m_overrun = true;
            else if (onArrival && m_bytes.arrival().isValid())
                onArrival(m_part, m_bytes.arrival());
        };
        m_reader->onPartEnd = [this](int) -> Error {
            if (m_overrun || (m_part.declaredLength >= 0 && m_part.declaredLength != m_bytes.size()))
                return Error(ErrorCode::Protocol, QStringLiteral("part %1 has %2 bytes, its header said %3").arg(m_part.index + 1).arg(m_bytes.size()).arg(m_part.declaredLength));
            if (onPartHere) {
                ++partsHere;
                bytesHere += m_bytes.size();
                return onPartHere(m_part, ByteView(m_bytes.take()));
            }
            onPart(m_part, m_bytes.take());
            return Error();
        };
        return Error();
    }

    char *directBuffer(qint64 wanted, qint64 *capacity) override
    {
        const qint64 partWants = m_reader ? m_reader->bodyBytesWanted() : 0;
        if (partWants <= 0)
            return nullptr;  // framing, headers: through feed()
        return m_bytes.room(std::min(wanted, partWants), capacity);  // null for a part of unknown length
    }

    Error tookDirect(qint64 n) override
    {
        if (n <= 0)
            return Error();
        m_bytes.took(n);
        if (onArrival)
            onArrival(m_part, m_bytes.arrival());
        return m_reader->takeBody(n);
    }

    Error feed(const char *data, qint64 n) override
    {
        if (!m_reader) {
            if (errorText.size() < 64 * 1024)
                errorText.append(data, std::min<qint64>(n, 64 * 1024 - errorText.size()));
            return Error();
        }
        return m_reader->feed(data, n);
    }

    Error end() override { return m_reader ? m_reader->finish() : Error(); }

private:
    std::unique_ptr<MultipartReader> m_reader;
    WadoPart m_part;
    PartBuffer m_bytes;
    bool m_overrun = false;
};

/// A multipart answer parsed as it arrives.
class MultipartJob : public HttpJob<RetrieveSummary>
{
public:
    MultipartJob(DicomWebClient *c, QNetworkRequest r, QString what, RetrieveCallbacks callbacks)
        : HttpJob(c, "GET", std::move(r), {}, std::move(what)), m_callbacks(std::move(callbacks)), m_directRequest(request())
    {
        m_clock.start();
    }

    ~MultipartJob() override { stopDirect(); }

protected:
    void doStart() override
    {
        // Plain HTTP: straight from the socket, whoever watches the parts arrive.
        if (canStreamDirectly(m_directRequest.url()))
            return startDirect();
        HttpJob::doStart();
    }

    void doCancel() override
    {
        stopDirect();
        HttpJob::doCancel();
    }

    void received(QNetworkReply *reply) override
    {
        if (m_error.isError())
            return void(reply->readAll());
        if (!m_reader) {
            Result<QByteArray> boundary = MultipartReader::boundaryOf(reply->header(QNetworkRequest::ContentTypeHeader).toByteArray());
            if (!boundary.isOk())
                return stop(Error(ErrorCode::Protocol, QStringLiteral("%1: %2").arg(m_what, boundary.error().message())));
            m_reader = std::make_unique<MultipartReader>(boundary.value());
            m_reader->onPartBegin = [this](int index, const MultipartHeaders &h) {
                m_part = m_bytes.begin(index, h);
                if (m_callbacks.begin)
                    m_callbacks.begin(m_part);
            };
            m_reader->onPartData = [this](int, const char *data, qint64 n) {
                if (!m_bytes.append(data, n))
                    m_overrun = true;
                m_summary.bytes += n;
                if (m_callbacks.arriving && !m_overrun && m_bytes.arrival().isValid())
                    m_callbacks.arriving(m_part, m_bytes.arrival());
            };
            m_reader->onPartEnd = [this](int) -> Error {
                if (m_overrun || (m_part.declaredLength >= 0 && m_part.declaredLength != m_bytes.size())) {
                    return Error(ErrorCode::Protocol, QStringLiteral("%1: part %2 has %3 bytes, its header said %4")
                                                          .arg(m_what).arg(m_part.index + 1).arg(m_bytes.size()).arg(m_part.declaredLength));
                }
                ++m_summary.parts;
                ByteView whole(m_bytes.take());
                return m_callbacks.complete ? m_callbacks.complete(m_part, whole) : Error();
            };
        }
        for (qint64 available = reply->bytesAvailable(); available > 0; available = reply->bytesAvailable()) {
            const qint64 wanted = m_reader->bodyBytesWanted();
            qint64 room = 0;
            if (char *into = wanted > 0 ? m_bytes.room(std::min(available, wanted), &room) : nullptr) {
                // A part of known length: straight into its buffer, made when it began.
                const qint64 n = reply->read(into, room);
                if (n < 0)
                    return stop(Error(ErrorCode::Network, QStringLiteral("%1: %2").arg(m_what, reply->errorString())));
                m_bytes.took(n);
                if (Error e = m_reader->takeBody(n); e.isError())
                    return stop(e);
                m_summary.bytes += n;
                if (m_callbacks.arriving)
                    m_callbacks.arriving(m_part, m_bytes.arrival());
                continue;
            }
            // Delimiters and headers in small reads (the part after them is then read straight, above); parts
            // without a length whole. Into one buffer reused for every read: readAll() would allocate (and
            // fault in) a fresh one each time.
            const qint64 take = m_reader->isInPartBody() ? available : std::min<qint64>(available, 1024);
            if (m_chunk.size() < take)
                m_chunk.resize(take);
            const qint64 n = reply->read(m_chunk.data(), take);
            if (n < 0)
                return stop(Error(ErrorCode::Network, QStringLiteral("%1: %2").arg(m_what, reply->errorString())));
            if (n == 0)
                break;
            if (Error e = m_reader->feed(m_chunk.constData(), n); e.isError())
                return stop(e);
            if (m_error.isError())
                return;  // a callback stopped the job
        }
        setProgress(m_summary.bytes, 0);
    }

    void done(int status, const QByteArray &, QNetworkReply *) override
    {
        if (m_error.isError())
            return finishWith(m_error);
        if (status == 204 || !m_reader)
            return finishWith(Error(ErrorCode::NotFound, QStringLiteral("%1: the server sent no instance").arg(m_what)));
        if (Error e = m_reader->finish(); e.isError())
            return finishWith(e);  // a part cut short is never passed on as complete
        m_summary.seconds = m_clock.nsecsElapsed() / 1e9;
        finishWith(m_summary);
    }

private:
    /// Stops parsing; the job ends with `e` once the reply is over (or at once: abort).
    void stop(const Error &e)
    {
        m_error = e;
        abortReply();
        stopDirect();
        finishWith(e);
    }

    void startDirect()
    {
        stopDirect();
        QList<QPair<QByteArray, QByteArray>> fields;
        for (const QByteArray &name : m_directRequest.rawHeaderList())
            fields.append({name, m_directRequest.rawHeader(name)});
        auto consumer = std::make_shared<DirectMultipart>();
        auto cancel = std::make_shared<HttpCancel>();
        m_cancel = cancel;
        consumer->onPartHere = m_callbacks.completeOnReader;
        if (m_callbacks.arriving) {
            // From the reading thread to this one: the latest of each part, coalesced (at most one call queued).
            struct Latest
            {
                QMutex mutex;
                WadoPart part;
                Arrival arrival;
                bool queued = false;
            };
            auto latest = std::make_shared<Latest>();
            std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(this);
            consumer->onArrival = [latest, toJob, this](const WadoPart &part, const Arrival &arrival) {
                // The newest news replaces what is queued (an earlier part's ends with its completion anyway).
                QMutexLocker lock(&latest->mutex);
                latest->part = part;
                latest->arrival = arrival;
                if (std::exchange(latest->queued, true))
                    return;
                toJob->post([latest, this] {
                    QMutexLocker lock(&latest->mutex);
                    latest->queued = false;
                    const WadoPart p = latest->part;
                    const Arrival a = latest->arrival;
                    lock.unlock();
                    if (!m_error.isError() && !isFinished())
                        m_callbacks.arriving(p, a);
                });
            };
        }
        consumer->onPart = [this](WadoPart part, QByteArray bytes) {
            // Posted: the job lives on its own thread. The worker is joined before the job goes, so `this` is
            // alive when the call is made, and Qt drops calls still queued when it is deleted.
            QMetaObject::invokeMethod(this, [this, part = std::move(part), bytes = std::move(bytes)]() mutable { directPart(part, std::move(bytes)); },
                                      Qt::QueuedConnection);
        };
        const QUrl url = m_directRequest.url();
        const int timeoutMs = client() ? client()->endpoint().timeoutMs : 60000;
        auto ended = std::make_shared<std::promise<void>>();
        m_worker = ended->get_future();
        auto state = std::make_shared<std::atomic<int>>(0);  // 0 queued, 1 running, 2 abandoned before it ran
        m_workerState = state;
        startOnPool(networkPool(), [this, url, fields, timeoutMs, consumer, cancel, ended, state] {
            const auto signalEnd = qScopeGuard([ended] { ended->set_value(); });
            int queued = 0;
            if (!state->compare_exchange_strong(queued, 1))
                return;  // stopped before it started: the job may be gone; nothing of it is touched
            const Error e = runHttpGet(url, fields, timeoutMs, *consumer, *cancel);
            if (cancel->isCancelled())
                return;
            QMetaObject::invokeMethod(this, [this, e, consumer] { directDone(e, *consumer); }, Qt::QueuedConnection);
        });
    }

    /// Ends the worker (at once: its waits also watch the cancel pipe) and waits for it.
    void stopDirect()
    {
        if (m_cancel)
            m_cancel->cancel();
        int queued = 0;
        const bool neverRan = m_workerState && m_workerState->compare_exchange_strong(queued, 2);
        if (m_worker.valid() && !neverRan)
            m_worker.wait();  // at once: its waits also watch the cancel pipe
        m_worker = std::future<void>();
        m_workerState.reset();
        m_cancel.reset();
    }

    void directPart(const WadoPart &part, QByteArray bytes)
    {
        if (m_error.isError() || isFinished())
            return;
        ++m_summary.parts;
        m_summary.bytes += bytes.size();
        if (m_callbacks.begin)
            m_callbacks.begin(part);
        if (m_callbacks.complete) {
            if (Error e = m_callbacks.complete(part, ByteView(std::move(bytes))); e.isError())
                return stop(e);
        }
        setProgress(m_summary.bytes, 0);
    }

    void directDone(const Error &e, const DirectMultipart &consumer)
    {
        if (m_worker.valid())
            m_worker.wait();  // its last act was to post this call
        m_worker = std::future<void>();
        m_cancel.reset();
        if (m_error.isError() || isFinished())
            return;
        m_summary.parts += consumer.partsHere;
        m_summary.bytes += consumer.bytesHere;
        const HttpAuth &auth = client() ? client()->endpoint().auth : HttpAuth();
        if (consumer.status == 401 && auth.kind == HttpAuth::Kind::Bearer && auth.refresh && !m_directRefreshed) {
            m_directRefreshed = true;
            Result<QString> token = auth.refresh();
            if (!token.isOk())
                return finishWith(Error(ErrorCode::Authentication, QStringLiteral("%1: the token was refused and could not be refreshed: %2").arg(m_what, token.error().message())));
            m_directRequest.setRawHeader("Authorization", "Bearer " + token.value().toUtf8());
            return startDirect();
        }
        if (e.isError() && consumer.status == 0)
            return finishWith(e.code() == ErrorCode::Timeout || e.code() == ErrorCode::Network || e.code() == ErrorCode::Cancelled
                                  ? Error(e.code(), QStringLiteral("%1: %2").arg(m_what, e.message())) : e);
        if (consumer.status >= 300 && consumer.status < 400) {
            // Redirected (to https://, say): QNetworkAccessManager follows it, with a token refreshed here.
            if (m_directRequest.hasRawHeader("Authorization"))
                setRequestHeader("Authorization", m_directRequest.rawHeader("Authorization"));
            return HttpJob::doStart();
        }
        if (consumer.status < 200 || consumer.status >= 300)
            return finishWith(httpError(consumer.status, consumer.errorText, m_what));
        if (e.isError())  // a broken multipart answer, a part cut short, the connection lost: nothing partial was passed on
            return finishWith(e.code() == ErrorCode::Network || e.code() == ErrorCode::Timeout || e.code() == ErrorCode::Protocol
                                  ? Error(e.code(), QStringLiteral("%1: %2").arg(m_what, e.message())) : e);
        if (consumer.status == 204 || !consumer.sawMultipart || m_summary.parts == 0)
            return finishWith(Error(ErrorCode::NotFound, QStringLiteral("%1: the server sent no instance").arg(m_what)));
        m_summary.seconds = m_clock.nsecsElapsed() / 1e9;
        finishWith(m_summary);
    }

    RetrieveCallbacks m_callbacks;
    QNetworkRequest m_directRequest;  ///< what the direct path sends (its Authorization may be refreshed)
    std::future<void> m_worker;       ///< the direct path's reader (a task on networkPool()) has ended
    std::shared_ptr<std::atomic<int>> m_workerState;  ///< whether it started (a stop before that does not wait for it)
    std::shared_ptr<HttpCancel> m_cancel;
    bool m_directRefreshed = false;
    std::unique_ptr<MultipartReader> m_reader;
    QByteArray m_chunk;  ///< what the reply had, read into the same memory each time
    WadoPart m_part;
    PartBuffer m_bytes;
    bool m_overrun = false;
    RetrieveSummary m_summary;
    Error m_error;
    QElapsedTimer m_clock;
};

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

DicomWebClient::DicomWebClient(DicomWebEndpoint endpoint, QObject *parent) : QObject(parent), m_endpoint(std::move(endpoint))
{
    m_endpoint.maxParallel = std::clamp(m_endpoint.maxParallel, 1, 64);
    const int managers = (m_endpoint.maxParallel + kConnectionsPerManager - 1) / kConnectionsPerManager;
    for (int i = 0; i < managers; ++i) {
        auto m = std::make_unique<QNetworkAccessManager>();
        m->setTransferTimeout(m_endpoint.timeoutMs);
        m->setRedirectPolicy(QNetworkRequest::NoLessSafeRedirectPolicy);
        m_managers.push_back(std::move(m));
    }
}

DicomWebClient::~DicomWebClient() = default;

QNetworkAccessManager *DicomWebClient::nextManager()
{
    QNetworkAccessManager *m = m_managers[m_next % m_managers.size()].get();
    ++m_next;
    return m;
}

QNetworkRequest DicomWebClient::request(const QString &path, const QList<QPair<QString, QString>> &query) const
{
    QUrl url = m_endpoint.base;
    QString basePath = url.path();
    while (basePath.endsWith(QLatin1Char('/')))
        basePath.chop(1);
    url.setPath(basePath + QLatin1Char('/') + path);
    if (!query.isEmpty()) {
        QUrlQuery q;
        for (const auto &[k, v] : query)
            q.addQueryItem(k, QString::fromLatin1(QUrl::toPercentEncoding(v, "*?,")));
        url.setQuery(q);
    }
    QNetworkRequest r(url);
    r.setTransferTimeout(m_endpoint.timeoutMs);
    switch (m_endpoint.auth.kind) {
    case HttpAuth::Kind::None:
        break;
    case HttpAuth::Kind::Basic:
        r.setRawHeader("Authorization", "Basic " + (m_endpoint.auth.user + QLatin1Char(':') + m_endpoint.auth.password).toUtf8().toBase64());
        break;
    case HttpAuth::Kind::Bearer:
        r.setRawHeader("Authorization", "Bearer " + m_endpoint.auth.token.toUtf8());
        break;
    }
    if (url.scheme() == QLatin1String("https") && !m_endpoint.caFile.isEmpty()) {
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.addCaCertificates(QSslCertificate::fromPath(m_endpoint.caFile, QSsl::Pem));
        r.setSslConfiguration(tls);
    }
    return r;
}

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
        params.append({QStringLiteral("includefield"), QStringLiteral("00081030,00080061,00201206,00201208")});
        break;
    case QueryLevel::Series:
        path = q.studyInstanceUid.isEmpty() ? QStringLiteral("series") : QStringLiteral("studies/%1/series").arg(q.studyInstanceUid);
        add("Modality", q.modality);
        add("SeriesDescription", q.description);
        add("SeriesInstanceUID", q.seriesInstanceUid);
        params.append({QStringLiteral("includefield"), QStringLiteral("00081030,0008103E,00200011,00201209")});
        break;
    case QueryLevel::Instance:
        path = q.seriesInstanceUid.isEmpty() ? QStringLiteral("studies/%1/instances").arg(q.studyInstanceUid)
                                             : QStringLiteral("studies/%1/series/%2/instances").arg(q.studyInstanceUid, q.seriesInstanceUid);
        add("Modality", q.modality);
        if (q.instanceNumber > 0)
            add("InstanceNumber", QString::number(q.instanceNumber));
        params.append({QStringLiteral("includefield"), QStringLiteral("00200013,00080016")});
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

ResultJob<RetrieveSummary> *DicomWebClient::retrieve(const QString &studyUid, const QString &seriesUid, const QString &sopUid, RetrieveCallbacks callbacks)
{
    for (const QString &uid : {studyUid, seriesUid, sopUid}) {
        if (!uid.isEmpty() && !isValidUid(uid)) {
            return makeJob<RetrieveSummary>([uid](const CancelToken &) -> Result<RetrieveSummary> {
                return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not a DICOM UID").arg(uid.left(80)));
            }, RunOn::Caller);
        }
    }
    QString path = QStringLiteral("studies/") + studyUid;
    QString what = QStringLiteral("WADO-RS of study %1").arg(studyUid);
    if (!seriesUid.isEmpty()) {
        path += QStringLiteral("/series/") + seriesUid;
        what = QStringLiteral("WADO-RS of series %1").arg(seriesUid);
        if (!sopUid.isEmpty()) {
            path += QStringLiteral("/instances/") + sopUid;
            what = QStringLiteral("WADO-RS of instance %1").arg(sopUid);
        }
    }
    QNetworkRequest r = request(path);
    r.setRawHeader("Accept", "multipart/related; type=\"application/dicom\"; transfer-syntax=*");
    return new MultipartJob(this, r, what, std::move(callbacks));
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

ResultJob<QList<QByteArray>> *DicomWebClient::frames(const QString &studyUid, const QString &seriesUid, const QString &sopUid, const QList<int> &numbers)
{
    QStringList list;
    for (int n : numbers)
        list << QString::number(n);
    QNetworkRequest r = request(QStringLiteral("studies/%1/series/%2/instances/%3/frames/%4").arg(studyUid, seriesUid, sopUid, list.join(QLatin1Char(','))));
    r.setRawHeader("Accept", "multipart/related; type=\"application/octet-stream\"; transfer-syntax=*");
    auto frames = std::make_shared<QList<QByteArray>>();
    RetrieveCallbacks callbacks;
    callbacks.complete = [frames](const WadoPart &, const ByteView &whole) {
        frames->append(whole.toByteArray());
        return Error();
    };
    auto *inner = new MultipartJob(this, r, QStringLiteral("WADO-RS frames"), callbacks);
    return chainJob<QList<QByteArray>>(inner, [frames, count = numbers.size()](const RetrieveSummary &, const CancelToken &) -> Result<QList<QByteArray>> {
        if (frames->size() != count)
            return Error(ErrorCode::Protocol, QStringLiteral("WADO-RS frames: asked for %1, got %2").arg(count).arg(frames->size()));
        return *frames;
    });
}

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

ResultJob<Done> *DicomWebClient::ping()
{
    DicomQuery q;
    q.limit = 1;
    return chainJob<Done>(search(q), [](const QList<DicomRecord> &, const CancelToken &) -> Result<Done> { return Done{}; });
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
// WADO-RS retrieval: a study, series, instance or frames as a multipart answer, each part handed on as it
// arrives — read straight from the socket on a thread of its own where the connection allows (httpstream.h).

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

/// Whether an answer ends where its connection closes (no Content-Length, not chunked), as Orthanc's WADO-RS does.
bool endsAtClose(const QByteArray &contentLength, const QByteArray &transferEncoding)
{
    return contentLength.isEmpty() && !transferEncoding.toLower().contains("chunked");
}

/// The answer's end as the multipart body sees it. An answer that ends where its connection closes, ended inside
/// the multipart body after a part had begun — a server that died midway — is a network failure (another server may
/// send it), not a malformed answer; what came whole before is kept. A framed answer without its closing delimiter
/// is a malformed one.
Error endOfMultipart(MultipartReader &reader, bool closeFramed)
{
    Error e = reader.finish();
    if (closeFramed && e.isError() && e.code() == ErrorCode::Protocol && (reader.partsCompleted() > 0 || reader.isInPartBody()) && !reader.isComplete())
        return Error(ErrorCode::Network, QStringLiteral("the answer broke off before its end (%1)").arg(e.message()));
    return e;
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
        m_closeFramed = endsAtClose(h.value("content-length"), h.value("transfer-encoding"));
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

    Error end() override { return m_reader ? endOfMultipart(*m_reader, m_closeFramed) : Error(); }

private:
    std::unique_ptr<MultipartReader> m_reader;
    WadoPart m_part;
    PartBuffer m_bytes;
    bool m_overrun = false;
    bool m_closeFramed = false;
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

    void done(int status, const QByteArray &, QNetworkReply *reply) override
    {
        if (m_error.isError())
            return finishWith(m_error);
        if (status == 204 || !m_reader)
            return finishWith(Error(ErrorCode::NotFound, QStringLiteral("%1: the server sent no instance").arg(m_what)));
        const bool closeFramed = endsAtClose(reply->rawHeader("Content-Length"), reply->rawHeader("Transfer-Encoding"));
        if (Error e = endOfMultipart(*m_reader, closeFramed); e.isError())
            return finishWith(e.withContext(m_what));  // a part cut short is never passed on as complete
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
            return finishWith(httpError(consumer.status, consumer.errorText, m_what, client()->endpoint().auth));
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

} // namespace

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

} // namespace spectrum

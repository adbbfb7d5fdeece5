// SPDX-License-Identifier: Apache-2.0
#pragma once
// DICOMweb's insides, shared by the files that each do one of its jobs (dicomweb.h says what they promise):
//   dicomweb.cpp     the client: its connections, requests with their authentication, errors of HTTP
//   search.cpp       QIDO-RS searches and WADO-RS metadata, DICOM JSON read into records
//   retrieve.cpp     WADO-RS retrieval: multipart answers parsed as they arrive, straight from the socket
//   stow.cpp         STOW-RS: instances sent, the answer's accepted and failed instances
// HttpJob is one HTTP exchange as a job; the others look at its answer.

#include "spectrum/transfer/dicomweb.h"

#include "spectrum/core/logging.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QPointer>

#include <algorithm>

namespace spectrum::webwire {

/// An HTTP status as our error: 401/403 Authentication, 404 NotFound, 400/406/415 InvalidArgument, else Network;
/// the first 200 bytes of the answer kept in the message.
Error httpError(int status, const QByteArray &body, const QString &what);
/// The same, a 401 told apart: no credentials sent (the server wants some) or those sent refused.
Error httpError(int status, const QByteArray &body, const QString &what, const HttpAuth &sent);

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
    /// An HTTP error as the request's kind can explain it better (a search refused: perhaps not the root).
    virtual Error explained(const Error &e, int status) const { Q_UNUSED(status) return e; }
    /// Whether a successful answer's headers announce what the request asked for (a search answered by a web
    /// page is refused at once, not read until the server closes); looked at once, before the first byte.
    virtual Error unexpected(QNetworkReply *reply) const { Q_UNUSED(reply) return Error(); }

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
        m_looked = false;
        QObject::connect(m_reply, &QNetworkReply::readyRead, this, [this] {
            const int s = status(m_reply);
            if (s >= 200 && s < 300 && !lookedAtHeaders(m_reply))
                return;
            if (s >= 200 && s < 300)
                received(m_reply);
            else
                m_answer += m_reply->readAll();  // an error text, for the message
        });
        QObject::connect(m_reply, &QNetworkReply::finished, this, [this] { finishedReply(); });
    }

    /// False when the headers announce the wrong answer: the job has then finished with that error.
    bool lookedAtHeaders(QNetworkReply *reply)
    {
        if (std::exchange(m_looked, true))
            return true;
        if (Error e = unexpected(reply); e.isError()) {
            abortReply();
            this->finishWith(e);
            return false;
        }
        return true;
    }

    void finishedReply()
    {
        QNetworkReply *reply = m_reply;
        m_reply = nullptr;
        reply->deleteLater();
        const int s = status(reply);
        if (s >= 200 && s < 300 && s != 204 && reply->bytesAvailable() > 0 && !lookedAtHeaders(reply))  // an empty answer says nothing wrong
            return;
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
        if (s == 0 && reply->error() == QNetworkReply::SslHandshakeFailedError)
            return this->finishWith(Error(ErrorCode::Authentication,  // the server is not who it must be: trying again changes nothing
                                          QStringLiteral("%1: the server's certificate is not trusted (%2): if the hospital's own CA signed it, name "
                                                         "that CA's certificate (PEM) as the store's CA file (--ca-file)").arg(m_what, reply->errorString())));
        if (s == 0) {
            const bool timeout = reply->error() == QNetworkReply::OperationCanceledError || reply->error() == QNetworkReply::TimeoutError;
            return this->finishWith(Error(timeout ? ErrorCode::Timeout : ErrorCode::Network,
                                          QStringLiteral("%1: %2 (%3)").arg(m_what, timeout ? QStringLiteral("no answer within %1 ms").arg(m_client->endpoint().timeoutMs) : reply->errorString(),
                                                                            QStringLiteral("%1:%2").arg(reply->url().host()).arg(reply->url().port(reply->url().scheme() == QLatin1String("https") ? 443 : 80)))));
        }
        if ((s < 200 || s >= 300) && !answersDespite(s, m_answer))
            return this->finishWith(explained(httpError(s, m_answer, m_what, m_client->endpoint().auth), s));
        if (s >= 200 && s < 300 && (reply->error() == QNetworkReply::OperationCanceledError || reply->error() == QNetworkReply::TimeoutError))
            return this->finishWith(Error(ErrorCode::Timeout, QStringLiteral("%1: the answer stopped coming (nothing more within %2 ms)")
                                                                  .arg(m_what).arg(m_client->endpoint().timeoutMs)));
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
    bool m_looked = false;  ///< unexpected() asked of this reply
};

} // namespace spectrum::webwire

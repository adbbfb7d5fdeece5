// SPDX-License-Identifier: Apache-2.0
#pragma once
// DicomWebClient: QIDO-RS (search), WADO-RS (retrieve instances, metadata, frames) and STOW-RS (store) against a
// DICOMweb server, on the caller's event loop through core's job API.
//
// Retrieval streams: a WADO-RS multipart/related answer is parsed as it arrives; each part's bytes are handed
// on while they come and the part as a whole as soon as its closing delimiter is in — the rest of the study may
// still be on the wire. Requests spread over several QNetworkAccessManagers, because Qt 6.4 opens at most 6
// HTTP/1.1 connections per host and manager.
//
// Secrets (password, bearer token) go into the Authorization header only: never into URLs, errors or logs.

#include "spectrum/core/bytes.h"
#include "spectrum/core/dicomquery.h"
#include "spectrum/core/resultjob.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QUrl>

#include <functional>
#include <memory>
#include <vector>

class QNetworkAccessManager;
class QNetworkRequest;

namespace spectrum {

struct HttpAuth
{
    enum class Kind { None, Basic, Bearer };
    Kind kind = Kind::None;
    QString user;      ///< Basic
    QString password;  ///< Basic
    QString token;     ///< Bearer
    /// Bearer: called (on the client's thread) when the server answers 401; returns a fresh token, and the
    /// request is sent once more with it. Unset: a 401 is an Authentication error.
    std::function<Result<QString>()> refresh;
    /// Bearer: the token to present now, asked for each request (any thread) — a signed-in user's access token,
    /// renewed behind the requests (OpenID Connect). Unset: `token`. Empty: not signed in.
    std::function<QString()> current;
    /// What to do when the token is refused or missing ("sign in again: File > Sign in…"), said in the error.
    QString signInHint;
};

struct DicomWebEndpoint
{
    QUrl base;            ///< e.g. http://pacs:8042/dicom-web — the studies resource is base + "/studies"
    HttpAuth auth;
    QString caFile;       ///< HTTPS: PEM certificates to trust besides the system's
    int maxParallel = 6;  ///< requests in flight at once, rounded up to a multiple of 6 (one connection pool per 6)
    int timeoutMs = 60000;  ///< a request that moves no byte this long fails
};

/// One part of a WADO-RS answer.
struct WadoPart
{
    int index = 0;              ///< 0, 1, … in the order of the answer
    QByteArray contentType;
    qint64 declaredLength = -1; ///< the part's Content-Length when the server sends one
};

struct RetrieveCallbacks
{
    std::function<void(const WadoPart &)> begin;
    /// What has arrived of a part that declares its length (Content-Length), while the rest comes: on the job's
    /// thread, the latest news of each part (reads in between are coalesced), whichever way the answer is read.
    std::function<void(const WadoPart &, const Arrival &)> arriving;
    /// The part is complete. An error stops the retrieval and becomes its result.
    std::function<Error(const WadoPart &, const ByteView &whole)> complete;
    /// Optional, instead of `begin` and `complete` for a part read on a thread of the retrieval's own (plain HTTP
    /// is read straight from the socket on one): called there, at once, while the part's bytes are still in that
    /// core's cache; the reading waits meanwhile (the kernel's receive buffer takes what the server sends). Must be
    /// thread-safe. An error stops the retrieval and becomes its result. Parts read through
    /// QNetworkAccessManager (HTTPS, a proxy, a redirect) go to `begin` and `complete` on the job's thread, so
    /// `complete` must be set too.
    std::function<Error(const WadoPart &, const ByteView &whole)> completeOnReader;
};

struct RetrieveSummary
{
    int parts = 0;
    qint64 bytes = 0;  ///< payload bytes of all parts
    double seconds = 0;
};

struct StowResult
{
    int sent = 0;
    QStringList stored;                       ///< SOP Instance UIDs the server accepted
    QList<QPair<QString, int>> failed;        ///< SOP Instance UID and DICOM failure reason (0x0110, 0xA700…)
    QStringList warnings;
    /// Instances the server neither stored nor named as failed (a part that was not DICOM has no UID to name).
    int unaccounted() const { return std::max(0, sent - int(stored.size()) - int(failed.size())); }
    bool allStored() const { return int(stored.size()) == sent; }
};

/// DICOM JSON (PS3.18 F.2) helpers.
namespace dicomjson {
/// The first value of `tag` ("0020000D") as text: PN as its Alphabetic group, numbers as decimals.
QString string(const QJsonObject &object, const char *tag);
QStringList strings(const QJsonObject &object, const char *tag);
DicomRecord record(const QJsonObject &object, QueryLevel level);
} // namespace dicomjson

class DicomWebClient : public QObject
{
    Q_OBJECT
public:
    explicit DicomWebClient(DicomWebEndpoint endpoint, QObject *parent = nullptr);
    ~DicomWebClient() override;

    const DicomWebEndpoint &endpoint() const { return m_endpoint; }

    /// QIDO-RS. Progress: none; the result holds one record per match, in the server's order.
    ResultJob<QList<DicomRecord>> *search(const DicomQuery &query);
    /// WADO-RS of a study, a series (seriesUid set) or one instance (both set), as application/dicom parts in
    /// their stored transfer syntax. progress(bytes, 0) as they arrive.
    ResultJob<RetrieveSummary> *retrieve(const QString &studyUid, const QString &seriesUid, const QString &sopUid, RetrieveCallbacks callbacks);
    /// WADO-RS metadata (DICOM JSON, no bulk data) of a study, series or instance.
    ResultJob<QJsonArray> *metadata(const QString &studyUid, const QString &seriesUid = {}, const QString &sopUid = {});
    /// WADO-RS frames (1-based numbers) of one instance, as stored.
    ResultJob<QList<QByteArray>> *frames(const QString &studyUid, const QString &seriesUid, const QString &sopUid, const QList<int> &numbers);
    /// STOW-RS of whole DICOM files (Part 10). The result lists what was stored and what failed, per instance;
    /// the job fails only when nothing could be said (network, authentication, a server error).
    ResultJob<StowResult> *store(const QList<ByteView> &instances);
    /// "Test connection": one QIDO request for at most one study.
    ResultJob<Done> *ping();

    /// For the jobs: a request with base URL, authentication and TLS applied, and the manager to send it with.
    QNetworkRequest request(const QString &path, const QList<QPair<QString, QString>> &query = {}) const;
    QNetworkAccessManager *nextManager();

private:
    DicomWebEndpoint m_endpoint;
    std::vector<std::unique_ptr<QNetworkAccessManager>> m_managers;
    size_t m_next = 0;
};

} // namespace spectrum

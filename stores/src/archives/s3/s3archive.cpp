// SPDX-License-Identifier: Apache-2.0
#include "archives/s3/s3archive.h"

#include "archives/fetchjob.h"
#include "archives/studylisting.h"

#include "spectrum/core/logging.h"
#include "spectrum/core/uid.h"
#include "spectrum/stores/signin/signin.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"

#include <QFile>
#include <QPointer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <deque>
#include <map>

namespace spectrum {

namespace {

constexpr char kIndexFormat[] = "spectrum-s3-study/1";
constexpr int kIndexWrites = 8;  // tries of a study's index write that others keep changing

/// A study's index as read, with the ETag it was read at ("" when the study has none yet).
struct ReadIndex
{
    QList<DicomIdentity> instances;
    QByteArray etag;
};

/// Reads a study's index with the ETag it was read at, for a conditional write over it. Blocking (runSync): on a
/// pool thread, the client made there.
Result<ReadIndex> readIndex(S3Client &client, const QString &key)
{
    for (int attempt = 0; attempt < 4; ++attempt) {
        const Result<S3Object> head = runSync(client.head(key));
        if (!head.isOk())
            return head.error().code() == ErrorCode::NotFound ? Result<ReadIndex>(ReadIndex{}) : Result<ReadIndex>(head.error());
        S3GetOptions bound;
        bound.ifMatch = head.value().etag;  // the index as of that ETag, or read again
        const Result<QByteArray> bytes = runSync(client.get(key, bound));
        if (!bytes.isOk() && bytes.error().code() == ErrorCode::Changed)
            continue;
        if (!bytes.isOk())
            return bytes.error();
        Result<QList<DicomIdentity>> instances = parseS3StudyIndex(bytes.value());
        if (!instances.isOk())
            return instances.error().withContext(QStringLiteral("s3://%1/%2").arg(client.endpoint().bucket, key));
        return ReadIndex{instances.takeValue(), head.value().etag};
    }
    return Error(ErrorCode::Busy, QStringLiteral("s3://%1/%2 kept changing while it was read").arg(client.endpoint().bucket, key));
}

/// A study's index for reading only (search, list): one GET, no ETag needed; none yet is an empty study.
Result<QList<DicomIdentity>> studyIndex(S3Client &client, const QString &key)
{
    const Result<QByteArray> bytes = runSync(client.get(key));
    if (!bytes.isOk())
        return bytes.error().code() == ErrorCode::NotFound ? Result<QList<DicomIdentity>>(QList<DicomIdentity>()) : Result<QList<DicomIdentity>>(bytes.error());
    Result<QList<DicomIdentity>> instances = parseS3StudyIndex(bytes.value());
    if (!instances.isOk())
        return instances.error().withContext(QStringLiteral("s3://%1/%2").arg(client.endpoint().bucket, key));
    return instances;
}

/// The study folders under `prefix` ("PREFIX STUDY/"), every page.
Result<QStringList> studyFolders(S3Client &client, const QString &prefix)
{
    QStringList folders;
    QString token;
    do {
        const Result<S3Listing> page = runSync(client.list(prefix, QStringLiteral("/"), token));
        if (!page.isOk())
            return page.error();
        folders += page.value().prefixes;
        token = page.value().truncated ? page.value().nextToken : QString();
    } while (!token.isEmpty());
    return folders;
}

/// The instances of a study from its index, in an S3 fetch: read, then several at once, each kept as it comes.
class S3Fetch : public FetchJob
{
public:
    S3Fetch(S3Endpoint endpoint, QString prefix, int parallel, FetchRequest what, FetchOptions options, std::shared_ptr<FileStore> cache, Archive::Kept kept)
        : FetchJob(std::move(what), std::move(options), std::move(cache), std::move(kept)), m_client(new S3Client(std::move(endpoint), this)),
          m_prefix(std::move(prefix)), m_parallel(std::max(1, parallel))
    {
    }

protected:
    void doStart() override
    {
        addSubjob(m_client->get(s3StudyIndexKey(m_prefix, m_what.studyUid)), [this](const Result<QByteArray> &r) {
            if (!r.isOk())
                return transferEnded(r.error().code() == ErrorCode::NotFound ? Error(ErrorCode::NotFound, QStringLiteral("not there")) : r.error());
            Result<QList<DicomIdentity>> index = parseS3StudyIndex(r.value());
            if (!index.isOk())
                return transferEnded(index.error());
            for (const DicomIdentity &id : index.value())
                if ((m_what.seriesUid.isEmpty() || id.seriesInstanceUid == m_what.seriesUid) && (m_what.sopUid.isEmpty() || id.sopInstanceUid == m_what.sopUid))
                    m_queue.push_back(s3InstanceKey(m_prefix, id));
            setExpected(int(m_queue.size()));
            if (m_queue.empty())
                return transferEnded(Error(ErrorCode::NotFound, QStringLiteral("not there")));
            pump();
        });
    }

private:
    void pump()
    {
        if (m_queue.empty() && m_inFlight == 0)
            return transferEnded(Error());
        while (m_inFlight < m_parallel && !m_queue.empty()) {
            const QString key = m_queue.front();
            m_queue.pop_front();
            ++m_inFlight;
            addSubjob(m_client->get(key), [this](const Result<QByteArray> &r) {
                --m_inFlight;
                if (r.isOk())
                    keep(ByteView(r.value()));
                else
                    transferProblem(r.error());  // the others still come; the job says what did not
                pump();
            });
        }
    }

    S3Client *m_client;
    QString m_prefix;
    int m_parallel;
    std::deque<QString> m_queue;
    int m_inFlight = 0;
};

} // namespace

Result<S3Endpoint> s3EndpointFor(const StoreConfig &s, const StoreConfigFile &config)
{
    const S3Settings *s3 = s.ifKind<S3Settings>();
    if (!s3)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("store '%1' is not an S3 store").arg(s.name));
    S3Endpoint e;
    e.endpoint = QUrl(s3->url);
    e.bucket = s3->bucket;
    e.virtualHosted = s3->virtualHosted;
    e.caFile = s3->caFile;
    e.timeoutMs = s.timeoutSeconds * 1000;
    e.credentials.region = s3->region;
    if (s3->auth == QLatin1String("oidc"))
        return e;
    e.credentials.accessKey = s3->accessKey;
    Result<QString> secret = config.reveal(s3->secretKey);
    if (!secret.isOk())
        return secret.error().withContext(s.name);
    e.credentials.secretKey = secret.value();
    return e;
}

QString s3InstanceKey(const QString &prefix, const DicomIdentity &id)
{
    return QStringLiteral("%1%2/%3/%4.dcm").arg(prefix, id.studyInstanceUid, id.seriesInstanceUid, id.sopInstanceUid);
}

QString s3StudyIndexKey(const QString &prefix, const QString &studyUid)
{
    return QStringLiteral("%1%2/study.json").arg(prefix, studyUid);
}

Result<QList<DicomIdentity>> parseS3StudyIndex(const QByteArray &json)
{
    QJsonParseError problem;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &problem);
    if (!doc.isObject())
        return Error(ErrorCode::Corrupt, QStringLiteral("a study index that is not JSON (%1)").arg(problem.errorString()));
    const QJsonObject o = doc.object();
    if (o.value(QStringLiteral("format")).toString() != QLatin1String(kIndexFormat))
        return Error(ErrorCode::Unsupported, QStringLiteral("a study index of another format ('%1')").arg(o.value(QStringLiteral("format")).toString().left(64)));
    QList<DicomIdentity> out;
    for (const QJsonValue &v : o.value(QStringLiteral("instances")).toArray()) {
        const DicomIdentity id = DicomIdentity::fromJson(v.toObject());
        if (!isValidUid(id.studyInstanceUid) || !isValidUid(id.seriesInstanceUid) || !isValidUid(id.sopInstanceUid))
            return Error(ErrorCode::Corrupt, QStringLiteral("a study index with an instance whose UIDs are not UIDs"));
        out << id;
    }
    return out;
}

QByteArray s3StudyIndex(const QList<DicomIdentity> &instances)
{
    QJsonArray array;
    for (const DicomIdentity &id : instances)
        array.append(id.toJson());
    return QJsonDocument(QJsonObject{{QStringLiteral("format"), QLatin1String(kIndexFormat)}, {QStringLiteral("instances"), array}}).toJson(QJsonDocument::Compact);
}

S3Archive::S3Archive(StoreConfig config, StoreConfigFile all, std::shared_ptr<FileStore> cache, QObject *parent)
    : Archive(std::move(config), std::move(all), std::move(cache), parent)
{
    const S3Settings &s3 = m_config.as<S3Settings>();
    SignIn *signIn = SignIn::forStore(m_config, m_all);
    if (!signIn)
        return;
    StsSettings sts;
    sts.url = QUrl(s3.stsUrl.isEmpty() ? s3.url : s3.stsUrl);
    sts.caFile = s3.caFile;
    sts.roleArn = s3.roleArn;
    sts.timeoutMs = m_config.timeoutSeconds * 1000;
    QPointer<SignIn> in(signIn);
    const auto token = [in]() -> ResultJob<QString> * {
        if (!in)
            return failedJob<QString>(Error(ErrorCode::Cancelled, QStringLiteral("the sign-in has ended with the program")));
        return in->identityToken();
    };
    const auto reader = [in]() { return in ? in->subject() : QString(); };
    m_sts = new StsSession(sts, token, reader, this);
    // Signed out, or another reader signed in: what the last one was given is dropped at once. Signed in where no
    // one was (or the sign-in an earlier program kept, read): a refusal held from before is forgotten.
    auto subject = std::make_shared<QString>(signIn->isSignedIn() ? signIn->subject() : QString());
    connect(signIn, &SignIn::changed, m_sts, [in, subject, sts = m_sts] {
        const QString now = in && in->isSignedIn() ? in->subject() : QString();
        if (!subject->isEmpty() && now != *subject)
            sts->forget();
        else if (subject->isEmpty() && !now.isEmpty())
            sts->forgetFailure();
        *subject = now;
    });
}

Result<S3Endpoint> S3Archive::endpoint() const
{
    Result<S3Endpoint> ep = s3EndpointFor(m_config, m_all);
    if (ep.isOk() && m_sts)
        ep.value().session = m_sts->handle();
    return ep;
}

ResultJob<Done> *S3Archive::test()
{
    Result<S3Endpoint> ep = endpoint();
    if (!ep.isOk())
        return track(failedJob<Done>(ep.error()));
    return track(makeJob<Done>([endpoint = ep.value(), prefix = m_config.as<S3Settings>().prefix](const CancelToken &) -> Result<Done> {
        S3Client client(endpoint);  // on this pool thread, for this test
        const Result<S3Listing> any = runSync(client.list(prefix, {}, {}, 1));
        if (!any.isOk())
            return any.error();
        return Done{};
    }));
}

ResultJob<QList<DicomRecord>> *S3Archive::search(const DicomQuery &query)
{
    Result<S3Endpoint> ep = endpoint();
    if (!ep.isOk())
        return track(failedJob<QList<DicomRecord>>(ep.error()));
    return track(makeJob<QList<DicomRecord>>([endpoint = ep.value(), prefix = m_config.as<S3Settings>().prefix, query](const CancelToken &cancel) -> Result<QList<DicomRecord>> {
        S3Client client(endpoint);
        QStringList studies;
        const QString &uid = query.studyInstanceUid;
        if (!uid.isEmpty() && !uid.contains(QLatin1Char('*')) && !uid.contains(QLatin1Char('?'))) {
            studies << uid;
        } else {
            Result<QStringList> folders = studyFolders(client, prefix);
            if (!folders.isOk())
                return folders.error();
            for (const QString &folder : folders.value())
                studies << folder.mid(prefix.size()).chopped(1);
        }
        QList<DicomIdentity> ids;
        for (const QString &study : std::as_const(studies)) {
            if (cancel.isCancelled())
                return Error(ErrorCode::Cancelled, QStringLiteral("cancelled by the caller"));
            Result<QList<DicomIdentity>> index = studyIndex(client, s3StudyIndexKey(prefix, study));
            if (!index.isOk()) {
                qCWarning(lcStores) << "s3 search:" << index.error().toString();  // one unreadable study does not hide the others
                continue;
            }
            ids += index.value();
        }
        return studiesFrom(ids, query);
    }));
}

ResultJob<StudySummary> *S3Archive::list(const QString &studyUid)
{
    Result<S3Endpoint> ep = endpoint();
    if (!ep.isOk())
        return track(failedJob<StudySummary>(ep.error()));
    return track(makeJob<StudySummary>([endpoint = ep.value(), prefix = m_config.as<S3Settings>().prefix, studyUid](const CancelToken &) -> Result<StudySummary> {
        S3Client client(endpoint);
        Result<QList<DicomIdentity>> index = studyIndex(client, s3StudyIndexKey(prefix, studyUid));
        if (!index.isOk())
            return index.error();
        StudySummary study = studyFrom(studyUid, {}, index.value());
        if (study.instanceCount == 0)
            return Error(ErrorCode::NotFound, QStringLiteral("study %1 has no instance there").arg(studyUid));
        return study;
    }));
}

ResultJob<FetchSummary> *S3Archive::fetch(const FetchRequest &what, const FetchOptions &options, Kept kept)
{
    Result<S3Endpoint> ep = endpoint();
    if (!ep.isOk())
        return track(failedJob<FetchSummary>(ep.error()));
    return track(new S3Fetch(ep.value(), m_config.as<S3Settings>().prefix, m_config.maxParallel, what, options, m_cache, std::move(kept)));
}

ResultJob<ExportSummary> *S3Archive::send(const QStringList &files)
{
    Result<S3Endpoint> ep = endpoint();
    if (!ep.isOk())
        return track(failedJob<ExportSummary>(ep.error()));
    return track(makeJob<ExportSummary>([endpoint = ep.value(), prefix = m_config.as<S3Settings>().prefix, files](const CancelToken &) -> Result<ExportSummary> {
        S3Client client(endpoint);
        ExportSummary out;
        std::map<QString, QList<DicomIdentity>> sent;  // by study: what goes into its index
        for (const QString &f : files) {
            QFile file(f);
            if (!file.open(QIODevice::ReadOnly)) {
                out.failed.append({f, file.errorString()});
                continue;
            }
            const QByteArray bytes = file.readAll();
            Result<DicomIdentity> id = readDicomIdentity(ByteView(bytes));
            if (!id.isOk() || !isValidUid(id.value().sopInstanceUid) || !isValidUid(id.value().seriesInstanceUid) || !isValidUid(id.value().studyInstanceUid)) {
                out.failed.append({f, id.isOk() ? QStringLiteral("no Study, Series or SOP Instance UID") : id.error().toString()});
                continue;
            }
            S3PutOptions put;
            put.contentType = "application/dicom";
            put.checksum = S3Checksum::Crc32c;  // read whole and often: checked on every fetch at memory speed (decision 0025)
            const Result<S3Object> stored = runSync(client.put(s3InstanceKey(prefix, id.value()), bytes, put));
            if (!stored.isOk()) {
                out.failed.append({f, stored.error().toString()});
                continue;
            }
            sent[id.value().studyInstanceUid] << id.value();
        }
        // Each study's index: what it held, and what came now, written only over the version read.
        for (const auto &[study, ids] : sent) {
            Error last;
            bool written = false;
            for (int attempt = 0; attempt < kIndexWrites && !written; ++attempt) {
                Result<ReadIndex> index = readIndex(client, s3StudyIndexKey(prefix, study));
                if (!index.isOk()) {
                    last = index.error();
                    break;
                }
                QList<DicomIdentity> merged = index.value().instances;
                for (const DicomIdentity &id : ids) {
                    auto same = std::find_if(merged.begin(), merged.end(), [&](const DicomIdentity &m) { return m.sopInstanceUid == id.sopInstanceUid; });
                    if (same != merged.end())
                        *same = id;
                    else
                        merged << id;
                }
                S3PutOptions conditional;
                conditional.contentType = "application/json";
                conditional.ifNoneMatch = index.value().etag.isEmpty();
                conditional.ifMatch = index.value().etag;
                const Result<S3Object> r = runSync(client.put(s3StudyIndexKey(prefix, study), s3StudyIndex(merged), conditional));
                written = r.isOk();
                last = r.error();
                if (!r.isOk() && r.error().code() != ErrorCode::Changed)
                    break;  // another workstation wrote it meanwhile: read again and merge; anything else: give up
            }
            for (const DicomIdentity &id : ids) {
                if (written)
                    out.stored << id.sopInstanceUid;
                else
                    out.failed.append({id.sopInstanceUid, QStringLiteral("stored, but the study's index could not be written: %1").arg(last.toString())});
            }
        }
        return out;
    }));
}

} // namespace spectrum

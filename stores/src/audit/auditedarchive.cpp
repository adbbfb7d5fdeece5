// SPDX-License-Identifier: Apache-2.0
#include "audit/auditedarchive.h"

#include "spectrum/stores/audit/auditsubjects.h"

#include "spectrum/core/audit/audit.h"
#include "spectrum/core/audit/auditevents.h"
#include "spectrum/core/threadpools.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"

#include <QDir>
#include <QFile>
#include <QUrl>
#include <QPointer>

namespace spectrum {

namespace ae = auditevents;

namespace {

constexpr auto kStudyRootFind = "1.2.840.10008.5.1.4.1.2.2.1";
constexpr auto kPatientRootFind = "1.2.840.10008.5.1.4.1.2.1.1";

/// The query as its matching keys, in DICOM's attribute keywords: what was asked, as the audit message keeps it.
QByteArray queryText(const DicomQuery &q)
{
    QStringList parts;
    const char *level[] = {"PATIENT", "STUDY", "SERIES", "IMAGE"};
    parts << QStringLiteral("QueryRetrieveLevel=%1").arg(QLatin1String(level[int(q.level)]));
    const QList<QPair<const char *, QString>> keys = {
        {"PatientName", q.patientName}, {"PatientID", q.patientId}, {"AccessionNumber", q.accessionNumber},
        {q.level == QueryLevel::Study ? "ModalitiesInStudy" : "Modality", q.modality},
        {q.level == QueryLevel::Series ? "SeriesDescription" : "StudyDescription", q.description},
        {"StudyDate", q.dicomDateRange()}, {"StudyInstanceUID", q.studyInstanceUid}, {"SeriesInstanceUID", q.seriesInstanceUid},
    };
    for (const auto &[key, value] : keys) {
        if (!value.isEmpty())
            parts << QStringLiteral("%1=%2").arg(QLatin1String(key), value);
    }
    return parts.join(QLatin1Char('&')).toUtf8();
}

AuditMessage::Outcome outcomeOf(const Error &e, bool partly)
{
    if (!e.isError())
        return partly ? AuditMessage::Outcome::MinorFailure : AuditMessage::Outcome::Success;
    return e.code() == ErrorCode::Cancelled ? AuditMessage::Outcome::MinorFailure : AuditMessage::Outcome::SeriousFailure;
}

/// Calls `then(job's result)` as `job` finishes, on the thread it finishes on (a job run synchronously is gone
/// right after; `then` only records, which any thread may do).
template <typename T, typename F>
void onFinished(ResultJob<T> *job, F then)
{
    QObject::connect(job, &Job::finished, job, [job, then] { then(job->result()); }, Qt::DirectConnection);
}

} // namespace

/// A send with its audit: the files' identities read first (on the pool), then the archive's own send, then one
/// DICOM Instances Transferred per study. Cancelled, it cancels the send under way.
class AuditedSend : public ResultJob<ExportSummary>
{
public:
    AuditedSend(AuditedArchive *archive, QStringList files, ae::Peer peer) : m_archive(archive), m_files(std::move(files)), m_peer(std::move(peer)) {}

protected:
    void doStart() override
    {
        m_read = makeJob<QList<DicomIdentity>>([files = m_files](const CancelToken &) -> Result<QList<DicomIdentity>> {
            QList<DicomIdentity> ids;
            for (const QString &path : files) {
                QFile f(path);
                const uchar *map = f.open(QIODevice::ReadOnly) && f.size() > 0 ? f.map(0, f.size()) : nullptr;
                if (!map)
                    continue;
                Result<DicomIdentity> id = readDicomIdentity(ByteView(reinterpret_cast<const char *>(map), f.size(), nullptr));
                if (id.isOk() && id.value().isValid())
                    ids.append(id.value());
            }
            return ids;
        });
        m_read->setParent(this);
        connect(m_read, &Job::finished, this, [this] { read(); });
        m_read->start(ExecutionPolicy::Async);
    }
    void doCancel() override
    {
        if (m_send && !m_send->isFinished())
            m_send->cancel();
    }

private:
    void read()
    {
        if (isFinished())
            return;
        if (!m_archive)
            return finishWith(Error(ErrorCode::Cancelled, QStringLiteral("the store's configuration changed before the send")));
        m_ids = m_read->result().isOk() ? m_read->result().value() : QList<DicomIdentity>();
        m_send = m_archive->inner()->send(m_files);
        m_send->setParent(this);
        connect(m_send, &Job::progress, this, [this](qint64 done, qint64 total) { setProgress(done, total); });
        connect(m_send, &Job::finished, this, [this] { sent(); });
        m_send->start(ExecutionPolicy::Async);
    }
    void sent()
    {
        const Result<ExportSummary> &r = m_send->result();
        AuditedArchive::alertOn(m_peer, r.error());
        for (const ae::Study &s : auditStudiesOf(m_ids)) {
            const bool all = r.isOk() && r.value().failed.isEmpty();
            QString why = r.isOk() ? QString() : r.error().message();
            if (r.isOk() && !r.value().failed.isEmpty())
                why = QStringLiteral("%1 of the instances refused: %2").arg(r.value().failed.size()).arg(r.value().failed.first().second);
            audit(ae::instancesTransferred(false, m_peer, s, QLatin1Char('C'),
                                           all ? AuditMessage::Outcome::Success
                                               : (r.isOk() && !r.value().stored.isEmpty() ? AuditMessage::Outcome::MinorFailure : AuditMessage::Outcome::SeriousFailure),
                                           why));
        }
        finishWith(r);
    }

    QPointer<AuditedArchive> m_archive;
    QStringList m_files;
    ae::Peer m_peer;
    QList<DicomIdentity> m_ids;
    ResultJob<QList<DicomIdentity>> *m_read = nullptr;
    ResultJob<ExportSummary> *m_send = nullptr;
};

AuditedArchive::AuditedArchive(std::unique_ptr<Archive> inner) : Archive(inner->config(), StoreConfigFile(), nullptr), m_inner(std::move(inner))
{
}

AuditedArchive::~AuditedArchive() = default;

void AuditedArchive::alertOn(const ae::Peer &peer, const Error &error)
{
    if (error.code() != ErrorCode::Authentication || !isAuditing())
        return;
    // A certificate refused (ours or the store's) is the node's authentication; refused credentials (a token, a
    // password, an AE title it does not know) the use of a function we are not allowed.
    const bool certificate = error.message().contains(QLatin1String("certificate"), Qt::CaseInsensitive)
        || error.message().contains(QLatin1String("TLS"), Qt::CaseSensitive);
    audit(ae::securityAlert(certificate ? ae::Alert::NodeAuthentication : ae::Alert::UseOfRestrictedFunction, peer, error.message()));
}

ResultJob<Done> *AuditedArchive::test()
{
    ResultJob<Done> *job = track(m_inner->test());
    onFinished(job, [peer = auditPeerOf(m_config)](const Result<Done> &r) { alertOn(peer, r.error()); });
    return job;
}

ResultJob<QList<DicomRecord>> *AuditedArchive::search(const DicomQuery &query)
{
    ResultJob<QList<DicomRecord>> *job = track(m_inner->search(query));
    const ae::Peer peer = auditPeerOf(m_config);
    const QString model = QLatin1String(query.level == QueryLevel::Patient ? kPatientRootFind : kStudyRootFind);
    const QByteArray asked = queryText(query);
    onFinished(job, [peer, model, asked](const Result<QList<DicomRecord>> &r) {
        if (!isAuditing())
            return;
        audit(ae::query(peer, model, asked, outcomeOf(r.error(), false), r.isOk() ? QString() : r.error().message()));
        alertOn(peer, r.error());
    });
    return job;
}

ResultJob<StudySummary> *AuditedArchive::list(const QString &studyUid)
{
    ResultJob<StudySummary> *job = track(m_inner->list(studyUid));
    onFinished(job, [peer = auditPeerOf(m_config)](const Result<StudySummary> &r) { alertOn(peer, r.error()); });
    return job;
}

ResultJob<StudySummary> *AuditedArchive::firstLook(const QString &studyUid)
{
    ResultJob<StudySummary> *job = track(m_inner->firstLook(studyUid));
    onFinished(job, [peer = auditPeerOf(m_config)](const Result<StudySummary> &r) { alertOn(peer, r.error()); });
    return job;
}

ResultJob<FetchSummary> *AuditedArchive::fetch(const FetchRequest &what, const FetchOptions &options, Kept kept)
{
    const ae::Peer peer = auditPeerOf(m_config);
    // A study or a series starts to come (an instance alone is the slice in view, part of its study's retrieve).
    if (what.sopUid.isEmpty() && isAuditing()) {
        ae::Study s;
        s.studyUid = what.studyUid;
        s.patientId = options.patientId;
        audit(ae::beginTransferring(peer, s));
    }
    ResultJob<FetchSummary> *job = track(m_inner->fetch(what, options, std::move(kept)));
    onFinished(job, [peer, what, patientId = options.patientId, outDir = options.outDir](const Result<FetchSummary> &r) {
        if (!isAuditing())
            return;
        alertOn(peer, r.error());
        if (r.isOk()) {
            for (const ae::Study &s : auditStudiesOf(r.value().identities)) {
                audit(ae::instancesTransferred(true, peer, s, QLatin1Char('C'), outcomeOf(Error(), !r.value().problems.isEmpty()),
                                               r.value().problems.join(QStringLiteral("; "))));
                // Into a folder rather than the cache: the study leaves the workstation's keeping.
                if (!outDir.isEmpty())
                    audit(ae::dataExport(QUrl::fromLocalFile(QDir(outDir).absolutePath()).toString(), s, false));
            }
        } else if (r.error().code() != ErrorCode::Cancelled || what.sopUid.isEmpty()) {
            ae::Study s;
            s.studyUid = what.studyUid;
            s.patientId = patientId;
            audit(ae::instancesTransferred(true, peer, s, QLatin1Char('C'), outcomeOf(r.error(), false), r.error().message()));
        }
    });
    return job;
}

ResultJob<ExportSummary> *AuditedArchive::send(const QStringList &files)
{
    const ae::Peer peer = auditPeerOf(m_config);
    if (!isAuditing()) {
        ResultJob<ExportSummary> *job = track(m_inner->send(files));
        onFinished(job, [peer](const Result<ExportSummary> &r) { alertOn(peer, r.error()); });
        return job;
    }
    // Whose instances they are is read from the files (on the pool) before they go: the caller may remove them
    // once the send is done.
    return track(new AuditedSend(this, files, peer));
}

} // namespace spectrum

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
#include <QMutex>

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

AuditedArchive::AuditedArchive(std::unique_ptr<Archive> inner) : Archive(inner->config(), StoreConfigFile(), nullptr), m_inner(std::move(inner))
{
}

AuditedArchive::~AuditedArchive() = default;

void AuditedArchive::alertOn(const Error &error) const
{
    if (error.code() != ErrorCode::Authentication || !isAuditing())
        return;
    // A certificate refused (ours or the store's) is the node's authentication; refused credentials (a token, a
    // password, an AE title it does not know) the use of a function we are not allowed.
    const bool certificate = error.message().contains(QLatin1String("certificate"), Qt::CaseInsensitive)
        || error.message().contains(QLatin1String("TLS"), Qt::CaseSensitive);
    audit(ae::securityAlert(certificate ? ae::Alert::NodeAuthentication : ae::Alert::UseOfRestrictedFunction, auditPeerOf(m_config), error.message()));
}

ResultJob<Done> *AuditedArchive::test()
{
    ResultJob<Done> *job = track(m_inner->test());
    onFinished(job, [this](const Result<Done> &r) { alertOn(r.error()); });
    return job;
}

ResultJob<QList<DicomRecord>> *AuditedArchive::search(const DicomQuery &query)
{
    ResultJob<QList<DicomRecord>> *job = track(m_inner->search(query));
    const ae::Peer peer = auditPeerOf(m_config);
    const QString model = QLatin1String(query.level == QueryLevel::Patient ? kPatientRootFind : kStudyRootFind);
    const QByteArray asked = queryText(query);
    onFinished(job, [this, peer, model, asked](const Result<QList<DicomRecord>> &r) {
        if (!isAuditing())
            return;
        audit(ae::query(peer, model, asked, outcomeOf(r.error(), false), r.isOk() ? QString() : r.error().message()));
        alertOn(r.error());
    });
    return job;
}

ResultJob<StudySummary> *AuditedArchive::list(const QString &studyUid)
{
    ResultJob<StudySummary> *job = track(m_inner->list(studyUid));
    onFinished(job, [this](const Result<StudySummary> &r) { alertOn(r.error()); });
    return job;
}

ResultJob<StudySummary> *AuditedArchive::firstLook(const QString &studyUid)
{
    ResultJob<StudySummary> *job = track(m_inner->firstLook(studyUid));
    onFinished(job, [this](const Result<StudySummary> &r) { alertOn(r.error()); });
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
    onFinished(job, [this, peer, what, patientId = options.patientId, outDir = options.outDir](const Result<FetchSummary> &r) {
        if (!isAuditing())
            return;
        alertOn(r.error());
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

namespace {

/// What a send carries, read from its files on the pool while it goes — its files may be gone when it ends.
struct SendRecord
{
    QMutex mutex;
    bool read = false, finished = false;
    QList<DicomIdentity> identities;
    Result<ExportSummary> result;
    ae::Peer peer;

    /// Both halves in: one message per study (those stored, then those refused).
    void recordIfComplete()
    {
        for (const ae::Study &s : auditStudiesOf(identities)) {
            const bool ok = result.isOk() && result.value().failed.isEmpty();
            QString why = result.isOk() ? QString() : result.error().message();
            if (result.isOk() && !result.value().failed.isEmpty())
                why = QStringLiteral("%1 of the instances refused: %2").arg(result.value().failed.size()).arg(result.value().failed.first().second);
            audit(ae::instancesTransferred(false, peer, s, QLatin1Char('C'),
                                           ok ? AuditMessage::Outcome::Success
                                              : (result.isOk() && !result.value().stored.isEmpty() ? AuditMessage::Outcome::MinorFailure : AuditMessage::Outcome::SeriousFailure),
                                           why));
        }
    }
};

} // namespace

ResultJob<ExportSummary> *AuditedArchive::send(const QStringList &files)
{
    std::shared_ptr<SendRecord> record;
    if (isAuditing()) {
        record = std::make_shared<SendRecord>();
        record->peer = auditPeerOf(m_config);
        startOnPool(blockingPool(), [record, files] {
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
            QMutexLocker lock(&record->mutex);
            record->identities = ids;
            record->read = true;
            if (record->finished)
                record->recordIfComplete();
        });
    }
    ResultJob<ExportSummary> *job = track(m_inner->send(files));
    onFinished(job, [this, record](const Result<ExportSummary> &r) {
        alertOn(r.error());
        if (!record)
            return;
        QMutexLocker lock(&record->mutex);
        record->result = r;
        record->finished = true;
        if (record->read)
            record->recordIfComplete();
    });
    return job;
}

} // namespace spectrum

#include "findingsloader.h"

#include "spectrum/core/resultjob.h"
#include "spectrum/stores/blobstore.h"

namespace spectrum {

FindingsLoader::FindingsLoader(BlobStore *store, FindingsModel *model, QObject *parent) : QObject(parent), m_store(store), m_model(model) {}

QString reportOrigin(const ReadReport &report)
{
    QStringList parts{report.identity.modality.isEmpty() ? QStringLiteral("SR") : report.identity.modality};
    if (report.contentDateTime.size() >= 8)
        parts << DicomIdentity::displayDate(report.contentDateTime.left(8));
    if (!report.observerName.isEmpty())
        parts << DicomIdentity::displayName(report.observerName);
    else if (!report.identity.seriesDescription.isEmpty())
        parts << report.identity.seriesDescription;
    return parts.join(QLatin1Char(' '));
}

void FindingsLoader::setStudy(const StudySummary &study)
{
    QSet<QString> keys;
    for (const SeriesSummary &s : study.series) {
        if (s.modality != QLatin1String("SR"))
            continue;
        for (const InstanceRef &i : s.instances)
            keys.insert(i.key);
    }
    if (keys == m_reportKeys)
        return;
    ++m_generation;
    m_reportKeys = keys;
    for (const QString &key : keys)
        load(key);
}

void FindingsLoader::instanceCached(const QString &key)
{
    if (m_reportKeys.contains(key))
        load(key);
}

QStringList FindingsLoader::notShown() const
{
    QStringList lines;
    for (const ReadReport &r : m_reports)
        for (const QString &line : r.notShown)
            lines << QStringLiteral("%1: %2").arg(reportOrigin(r), line);
    return lines;
}

void FindingsLoader::load(const QString &key)
{
    if (m_asked.contains(key))
        return;
    m_asked.insert(key);
    BlobStore *store = m_store;
    // Read and parsed on the pool where the store allows reading there (the cache does); else read, then parsed.
    ResultJob<ReadReport> *job = nullptr;
    if (store->readsOnAnyThread()) {
        job = makeJob<ReadReport>([store, key](const CancelToken &) -> Result<ReadReport> {
            Result<ByteView> bytes = runSync(store->read(key));
            if (!bytes.isOk())
                return bytes.error();
            return readStructuredReport(bytes.value());
        });
    } else {
        job = chainJob<ReadReport>(store->read(key), [](const ByteView &bytes, const CancelToken &) { return readStructuredReport(bytes); });
    }
    whenDone(job, this, [this, key, generation = m_generation](const Result<ReadReport> &r) {
        if (generation != m_generation)
            return;
        if (!r.isOk()) {
            m_asked.remove(key);  // not in the cache yet: asked again once it is
            if (r.error().code() != ErrorCode::NotFound)
                Q_EMIT reportFailed(key, r.error());
            return;
        }
        const ReadReport &report = r.value();
        const QString uid = report.identity.sopInstanceUid.isEmpty() ? key : report.identity.sopInstanceUid;
        m_reports.insert(uid, report);
        QList<Finding> findings;
        for (const ReportedFinding &rf : report.findings) {
            Finding f;
            f.annotation = rf.annotation;
            f.image = rf.image;
            f.origin = reportOrigin(report);
            f.originUid = uid;
            f.reportedValues = rf.values;
            f.otherValues = rf.otherValues;
            f.label = rf.label;
            findings << f;
        }
        m_model->addFromReport(uid, findings);
        Q_EMIT reportRead(uid);
    });
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "findings/findingsloader.h"

#include "spectrum/core/resultjob.h"
#include "spectrum/stores/blobs/blobstore.h"

#include <algorithm>

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

QString keySelectionOrigin(const KeyObjectSelection &selection)
{
    QStringList parts{QStringLiteral("KO")};
    if (selection.contentDateTime.size() >= 8)
        parts << DicomIdentity::displayDate(selection.contentDateTime.left(8));
    if (!selection.observerName.isEmpty())
        parts << DicomIdentity::displayName(selection.observerName);
    return parts.join(QLatin1Char(' '));
}

void FindingsLoader::setStudy(const StudySummary &study)
{
    QSet<QString> keys;
    for (const SeriesSummary &s : study.series) {
        if (s.modality != QLatin1String("SR") && s.modality != QLatin1String("KO") && s.modality != QLatin1String("PR"))
            continue;
        for (const InstanceRef &i : s.instances) {
            keys.insert(i.key);
            if (s.modality == QLatin1String("KO"))
                m_keyObjectKeys.insert(i.key);
            if (s.modality == QLatin1String("PR"))
                m_presentationKeys.insert(i.key);
        }
    }
    if (keys == m_reportKeys)
        return;
    // Only more documents (a study laid out again as it streams in): the reads under way are still the study's.
    // Otherwise their answers are dropped, and what they were reading is read again.
    if (!std::all_of(m_reportKeys.cbegin(), m_reportKeys.cend(), [&](const QString &k) { return keys.contains(k); })) {
        ++m_generation;
        m_reads.dropOut();
    }
    m_reportKeys = keys;
    for (const QString &key : keys)
        load(key);
}

void FindingsLoader::instanceCached(const QString &key)
{
    if (m_reportKeys.contains(key) && m_reads.landed(key))
        read(key);
}

QStringList FindingsLoader::notShown() const
{
    QStringList lines;
    for (const ReadReport &r : m_reports)
        for (const QString &line : r.notShown)
            lines << QStringLiteral("%1: %2").arg(reportOrigin(r), line);
    for (const KeySelection &k : m_model->keySelections())
        for (const QString &line : m_keyNotShown.value(k.uid))
            lines << QStringLiteral("%1: %2").arg(k.origin, line);
    for (const PresentationEntry &p : m_model->presentationStates())
        for (const QString &line : p.state.notShown)
            lines << QStringLiteral("%1: %2").arg(p.origin, line);
    for (auto it = m_model->withdrawnDocuments().constBegin(); it != m_model->withdrawnDocuments().constEnd(); ++it)
        lines << tr("%1: withdrawn — %2").arg(it.key(), it.value());
    return lines + m_otherNotShown;
}

void FindingsLoader::load(const QString &key)
{
    if (m_reads.ask(key))
        read(key);
}

void FindingsLoader::read(const QString &key)
{
    if (m_keyObjectKeys.contains(key))
        return loadKeyObjects(key);
    if (m_presentationKeys.contains(key))
        return loadPresentationState(key);
    whenDone(readDocument<ReadReport>(key, readStructuredReport), this, [this, key, generation = m_generation](const Result<ReadReport> &r) {
        if (generation != m_generation)
            return;
        if (!r.isOk())
            return failed(key, r.error());
        m_reads.ended(key, true);
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

void FindingsLoader::loadKeyObjects(const QString &key)
{
    whenDone(readDocument<KeyObjectSelection>(key, readKeyObjectSelection), this, [this, key, generation = m_generation](const Result<KeyObjectSelection> &r) {
        if (generation != m_generation)
            return;
        if (!r.isOk())
            return failed(key, r.error());
        m_reads.ended(key, true);
        KeySelection k;
        k.document = r.value();
        k.uid = k.document.identity.sopInstanceUid.isEmpty() ? key : k.document.identity.sopInstanceUid;
        k.origin = keySelectionOrigin(k.document);
        if (k.document.isRejectionNote()) {
            // IHE IOCM: what it lists is withdrawn — documents taken out, images left out of the study as shown,
            // never key images. Every reference is both, whatever its SOP class (a class not known here may be an
            // image).
            const QString why = tr("%1 (%2)").arg(k.document.title, k.origin);
            const QList<ImageRef> all = k.document.images + k.document.documents;
            QStringList uids;
            for (const ImageRef &d : all)
                uids << d.sopInstanceUid;
            m_model->withdraw(uids, why);
            m_model->rejectImages(all, why);
            if (!k.document.images.isEmpty())
                m_otherNotShown << tr("%n image(s) rejected by %1: not shown", nullptr, int(k.document.images.size())).arg(why);
            Q_EMIT reportRead(k.uid);
            return;
        }
        m_keyNotShown.insert(k.uid, k.document.notShown);
        m_model->addKeySelection(k);
        Q_EMIT reportRead(k.uid);
    });
}

void FindingsLoader::loadPresentationState(const QString &key)
{
    whenDone(readDocument<PresentationState>(key, readPresentationState), this,
             [this, key, generation = m_generation](const Result<PresentationState> &r) {
                 if (generation != m_generation)
                     return;
                 if (!r.isOk()) {
                     // Only the grayscale kind is read: a colour or blending state is said, not failed.
                     if (r.error().code() == ErrorCode::InvalidDicom)
                         m_otherNotShown << tr("a presentation state of a kind not applied here (%1)").arg(key);
                     return failed(key, r.error());
                 }
                 m_reads.ended(key, true);
                 PresentationEntry p;
                 p.state = r.value();
                 p.uid = p.state.identity.sopInstanceUid.isEmpty() ? key : p.state.identity.sopInstanceUid;
                 QStringList parts{QStringLiteral("PR")};
                 if (p.state.creationDateTime.size() >= 8)
                     parts << DicomIdentity::displayDate(p.state.creationDateTime.left(8));
                 if (!p.state.creatorName.isEmpty())
                     parts << DicomIdentity::displayName(p.state.creatorName);
                 p.origin = parts.join(QLatin1Char(' '));
                 m_model->addPresentationState(p);
                 Q_EMIT reportRead(p.uid);
             });
}

void FindingsLoader::failed(const QString &key, const Error &error)
{
    // Not in the cache yet: read again once it is (or now, when it came while this read was out). Unreadable: said
    // once, not read again at each new layout of the study.
    if (m_reads.ended(key, !readAgainWhenItLands(error)))
        load(key);
    if (error.code() != ErrorCode::NotFound)
        Q_EMIT reportFailed(key, error);
}

template <typename T>
ResultJob<T> *FindingsLoader::readDocument(const QString &key, Result<T> (*parse)(const ByteView &))
{
    BlobStore *store = m_store;
    // Read and parsed on the pool where the store allows reading there (the cache does); else read, then parsed.
    if (store->readsOnAnyThread()) {
        return makeJob<T>([store, key, parse](const CancelToken &) -> Result<T> {
            Result<ByteView> bytes = runSync(store->read(key));
            if (!bytes.isOk())
                return bytes.error();
            return parse(bytes.value());
        });
    }
    return chainJob<T>(store->read(key), [parse](const ByteView &bytes, const CancelToken &) { return parse(bytes); });
}

} // namespace spectrum

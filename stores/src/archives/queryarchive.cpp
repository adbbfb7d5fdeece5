// SPDX-License-Identifier: Apache-2.0
#include "archives/queryarchive.h"

#include "archives/studylisting.h"

#include "spectrum/core/compoundjob.h"
#include "spectrum/core/logging.h"
#include "spectrum/core/threadpools.h"
#include "spectrum/core/uid.h"

#include <QPointer>

namespace spectrum {

namespace {

using Find = std::function<ResultJob<QList<DicomRecord>> *(const DicomQuery &)>;

/// A conversation with the archive about one study that begins with its series.
class SeriesFirst : public CompoundJob<StudySummary>
{
public:
    SeriesFirst(Find find, QString studyUid) : m_find(std::move(find)), m_studyUid(std::move(studyUid)) {}

protected:
    void doStart() override
    {
        DicomQuery series;
        series.level = QueryLevel::Series;
        series.studyInstanceUid = m_studyUid;
        addSubjob(m_find(series), [this](const Result<QList<DicomRecord>> &r) { seriesListed(r); });
    }
    virtual void seriesListed(const Result<QList<DicomRecord>> &r) = 0;

    Find m_find;
    QString m_studyUid;
};

/// The series, then the instances of a study.
class ListStudy : public SeriesFirst
{
public:
    using SeriesFirst::SeriesFirst;

private:
    void seriesListed(const Result<QList<DicomRecord>> &r) override
    {
        if (!r.isOk())
            return finishWith(r.error());
        m_series = r.value();
        DicomQuery instances;
        instances.level = QueryLevel::Instance;
        instances.studyInstanceUid = m_studyUid;
        addSubjob(m_find(instances), [this](const Result<QList<DicomRecord>> &ir) { instancesListed(ir); });
    }

    void instancesListed(const Result<QList<DicomRecord>> &r)
    {
        if (!r.isOk())
            return finishWith(r.error());
        // Laid out on the pool: a study of 10,000 instances is sorted and placed in tens of milliseconds.
        runOnPool<StudySummary>(blockingPool(), this, [uid = m_studyUid, series = m_series, records = r.value()] {
            QList<DicomIdentity> ids;
            ids.reserve(records.size());
            for (const DicomRecord &i : records)
                ids << i.identity;
            return studyFrom(uid, series, ids);
        }, [this](StudySummary &&study) {
            if (isFinished())
                return;  // cancelled meanwhile
            if (study.instanceCount == 0)
                return finishWith(Error(ErrorCode::NotFound, QStringLiteral("study %1 has no instance there").arg(m_studyUid)));
            finishWith(study);
        });
    }

    QList<DicomRecord> m_series;
};

/// The series of a study, then the one instance its first series opens at.
class FirstLook : public SeriesFirst
{
public:
    using SeriesFirst::SeriesFirst;

private:
    void seriesListed(const Result<QList<DicomRecord>> &r) override
    {
        if (!r.isOk())
            return finishWith(r.error());
        // The series a study opens on: the lowest Series Number (studyFrom's order), the first listed on a tie.
        const DicomRecord *first = nullptr;
        for (const DicomRecord &s : r.value()) {
            if (s.relatedInstances != 0 && isValidUid(s.identity.seriesInstanceUid) && (!first || s.identity.seriesNumber < first->identity.seriesNumber))
                first = &s;
        }
        if (!first)
            return finishWith(Error(ErrorCode::NotFound, QStringLiteral("study %1 has no series there").arg(m_studyUid)));
        m_series = *first;
        DicomQuery middle;
        middle.level = QueryLevel::Instance;
        middle.studyInstanceUid = m_studyUid;
        middle.seriesInstanceUid = first->identity.seriesInstanceUid;
        middle.instanceNumber = std::max(0, first->relatedInstances) / 2 + 1;
        m_instanceNumber = middle.instanceNumber;
        addSubjob(m_find(middle), [this](const Result<QList<DicomRecord>> &ir) { middleFound(ir); });
    }

    void middleFound(const Result<QList<DicomRecord>> &r)
    {
        if (!r.isOk())
            return finishWith(r.error());
        QList<DicomIdentity> ids;
        for (const DicomRecord &i : r.value()) {
            if (i.identity.instanceNumber == m_instanceNumber && i.identity.seriesInstanceUid == m_series.identity.seriesInstanceUid)
                ids << i.identity;  // a server that ignores the filter answers with more: only that one
        }
        if (ids.size() != 1)
            return finishWith(Error(ErrorCode::NotFound, QStringLiteral("no single instance number %1 in the series").arg(m_instanceNumber)));
        StudySummary study = studyFrom(m_studyUid, {m_series}, ids);
        if (study.instanceCount != 1)
            return finishWith(Error(ErrorCode::NotFound, QStringLiteral("the first look found nothing to show")));
        finishWith(study);
    }

    DicomRecord m_series;
    int m_instanceNumber = 0;
};

} // namespace

QList<DicomRecord> mergeDuplicateRecords(const QList<DicomRecord> &records, QueryLevel level, int *merged)
{
    // What makes one record of the level: a study is one per Patient ID too (two patients under one Study UID stay
    // two answers, for the registry to flag).
    auto keyOf = [level](const DicomRecord &r) {
        const DicomIdentity &id = r.identity;
        switch (level) {
        case QueryLevel::Patient: return id.patientId + QLatin1Char('\n') + id.issuerOfPatientId;
        case QueryLevel::Study: return id.studyInstanceUid + QLatin1Char('\n') + id.patientId;
        case QueryLevel::Series: return id.studyInstanceUid + QLatin1Char('\n') + id.seriesInstanceUid;
        case QueryLevel::Instance: return id.seriesInstanceUid + QLatin1Char('\n') + id.sopInstanceUid;
        }
        return QString();
    };
    QList<DicomRecord> out;
    QHash<QString, int> at;
    int dropped = 0;
    for (const DicomRecord &r : records) {
        const QString key = keyOf(r);
        const auto seen = at.constFind(key);
        if (seen == at.cend()) {
            at.insert(key, int(out.size()));
            out << r;
            continue;
        }
        // The same study (series…) again: what it adds is kept; counts only when a record says them.
        ++dropped;
        DicomRecord &first = out[*seen];
        for (const QString &m : r.modalitiesInStudy)
            if (!first.modalitiesInStudy.contains(m))
                first.modalitiesInStudy << m;
        first.relatedStudies = std::max(first.relatedStudies, r.relatedStudies);
        first.relatedSeries = std::max(first.relatedSeries, r.relatedSeries);
        first.relatedInstances = std::max(first.relatedInstances, r.relatedInstances);
        if (first.identity.modality.isEmpty())
            first.identity.modality = r.identity.modality;
    }
    if (merged)
        *merged = dropped;
    return out;
}

Find QueryArchive::finder()
{
    // A job waiting for its start, or between its queries, may outlive the archive (the workstation closing): its
    // next query then fails instead of asking an archive that has gone.
    return [self = QPointer<QueryArchive>(this)](const DicomQuery &q) -> ResultJob<QList<DicomRecord>> * {
        if (!self)
            return failedJob<QList<DicomRecord>>(Error(ErrorCode::Cancelled, QStringLiteral("the store was closed")));
        // Some archives answer a study (or series) once per instance it holds (pynetdicom's Q/R SCP): one record
        // each, as the query asked.
        return chainJob<QList<DicomRecord>>(self->find(q), [level = q.level, name = self->name()](const QList<DicomRecord> &records, const CancelToken &) {
            int merged = 0;
            QList<DicomRecord> out = mergeDuplicateRecords(records, level, &merged);
            if (merged > 0)
                qCDebug(lcStores) << name << ": merged" << merged << "repeated answers of" << records.size();
            return Result<QList<DicomRecord>>(std::move(out));
        });
    };
}

ResultJob<StudySummary> *QueryArchive::list(const QString &studyUid)
{
    return track(new ListStudy(finder(), studyUid));
}

ResultJob<StudySummary> *QueryArchive::firstLook(const QString &studyUid)
{
    return track(new FirstLook(finder(), studyUid));
}

} // namespace spectrum

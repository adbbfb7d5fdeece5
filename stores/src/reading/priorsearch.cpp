// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/reading/priorsearch.h"

#include <QHash>

#include <algorithm>

namespace spectrum {

namespace {

QString normalised(const QString &s)
{
    return s.simplified().toUpper();
}

/// Names compared as a reader would: components, not their spacing or case ("Doe^John" = "DOE^JOHN^^").
QString normalisedName(const QString &pn)
{
    return normalised(DicomIdentity::displayName(pn));
}

} // namespace

QString patientMismatch(const DicomIdentity &current, const DicomIdentity &other)
{
    if (other.patientId != current.patientId)
        return QStringLiteral("another Patient ID (%1)").arg(other.patientId);
    if (!current.issuerOfPatientId.isEmpty() && !other.issuerOfPatientId.isEmpty()
        && normalised(current.issuerOfPatientId) != normalised(other.issuerOfPatientId))
        return QStringLiteral("the Patient ID was issued by %1, not %2").arg(other.issuerOfPatientId, current.issuerOfPatientId);
    if (!current.patientName.isEmpty() && !other.patientName.isEmpty() && normalisedName(current.patientName) != normalisedName(other.patientName))
        return QStringLiteral("another patient name (%1)").arg(DicomIdentity::displayName(other.patientName));
    if (!current.patientBirthDate.isEmpty() && !other.patientBirthDate.isEmpty() && current.patientBirthDate != other.patientBirthDate)
        return QStringLiteral("another birth date (%1)").arg(DicomIdentity::displayDate(other.patientBirthDate));
    if (!current.patientSex.isEmpty() && !other.patientSex.isEmpty() && normalised(current.patientSex) != normalised(other.patientSex))
        return QStringLiteral("another sex (%1)").arg(other.patientSex);
    return QString();  // fields only one side records prove nothing
}

namespace {

QString describe(const DicomIdentity &id, const QStringList &modalities)
{
    return QStringLiteral("%1 %2 %3").arg(DicomIdentity::displayDate(id.studyDate), modalities.join(QLatin1Char('/')), id.studyDescription).simplified();
}

QString bodyPartOf(const StudySummary &s)
{
    for (const SeriesSummary &series : s.series) {
        if (!series.bodyPart.isEmpty())
            return normalised(series.bodyPart);
    }
    return QString();
}

bool comparable(const StudySummary &current, const PriorStudy &other)
{
    const bool sameModality = std::any_of(other.modalities.begin(), other.modalities.end(),
                                          [&current](const QString &m) { return current.modalities.contains(m); });
    if (!sameModality)
        return false;
    const QString part = bodyPartOf(current);
    if (!part.isEmpty() && !other.bodyPart.isEmpty())
        return part == other.bodyPart;
    return normalised(current.identity.studyDescription) == normalised(other.identity.studyDescription)
           && !current.identity.studyDescription.trimmed().isEmpty();
}

} // namespace

bool PriorStudy::isEarlierThan(const DicomIdentity &current) const
{
    // Without both dates nothing is known to be earlier: an undated study is never "the prior".
    if (identity.studyDate.isEmpty() || current.studyDate.isEmpty())
        return false;
    return identity.studyDate + identity.studyTime < current.studyDate + current.studyTime;
}

int PriorList::mostRecentComparable(const DicomIdentity &current) const
{
    for (int i = 0; i < studies.size(); ++i) {  // newest first: the first one that qualifies
        if (studies[i].comparable && studies[i].isEarlierThan(current))
            return i;
    }
    return -1;
}

PriorList arrangePriors(const StudySummary &current, const QList<StudySummary> &cached,
                        const QList<QPair<QString, QList<StudyHit>>> &found)
{
    PriorList out;
    const DicomIdentity &me = current.identity;
    if (me.patientId.trimmed().isEmpty()) {
        out.withheld << QStringLiteral("this study has no Patient ID: no other study can be shown as the same patient's");
        return out;
    }
    QHash<QString, int> at;            // study UID → index in out.studies
    QSet<QString> conflicted;          // study UIDs another patient claims too
    QHash<QString, QString> withheld;  // study UID → why (one line per study)
    QHash<QString, QStringList> withheldWhere;
    QSet<QString> disagreeing;         // study UIDs some place gives this Patient ID with another name, birth date…
    auto offer = [&](const DicomIdentity &id, const QStringList &modalities, const QString &store) -> PriorStudy * {
        if (id.studyInstanceUid == me.studyInstanceUid || id.studyInstanceUid.isEmpty())
            return nullptr;
        if (const QString why = patientMismatch(me, id); !why.isEmpty()) {
            if (id.patientId == me.patientId) {  // a query by Patient ID answers only these; anything else is noise
                withheld.insert(id.studyInstanceUid, describe(id, modalities) + QStringLiteral(": ") + why);
                withheldWhere[id.studyInstanceUid] << (store.isEmpty() ? QStringLiteral("this workstation") : store);
                disagreeing.insert(id.studyInstanceUid);  // one place disagrees: not offered from any other either
            }
            return nullptr;
        }
        if (conflicted.contains(id.studyInstanceUid))
            return nullptr;
        auto it = at.find(id.studyInstanceUid);
        if (it == at.end()) {
            PriorStudy p;
            p.identity = id;
            it = at.insert(id.studyInstanceUid, int(out.studies.size()));
            out.studies << p;
        }
        PriorStudy &p = out.studies[*it];
        for (const QString &m : modalities) {
            if (!m.isEmpty() && !p.modalities.contains(m))
                p.modalities << m;
        }
        for (auto field : {&DicomIdentity::studyDescription, &DicomIdentity::studyTime, &DicomIdentity::accessionNumber,
                           &DicomIdentity::issuerOfPatientId, &DicomIdentity::patientBirthDate, &DicomIdentity::patientSex}) {
            if ((p.identity.*field).isEmpty())
                p.identity.*field = id.*field;
        }
        if (!store.isEmpty() && !p.stores.contains(store))
            p.stores << store;
        return &p;
    };
    // Conflicts first: a study UID the cache or any store holds under another patient is never offered.
    for (const StudySummary &s : cached) {
        // Flagged by the cache, or held here under another patient: the same UID from an archive is not this
        // patient's plainly (the cache would show the other patient's instances under it).
        if (s.identityConflict || s.identity.patientId != me.patientId
            || (!s.identity.issuerOfPatientId.isEmpty() && !me.issuerOfPatientId.isEmpty() && normalised(s.identity.issuerOfPatientId) != normalised(me.issuerOfPatientId)))
            conflicted.insert(s.identity.studyInstanceUid);
    }
    for (const auto &[store, hits] : found) {
        for (const StudyHit &h : hits) {
            if (!h.conflicts.isEmpty())
                conflicted.insert(h.study.identity.studyInstanceUid);
        }
    }
    for (const StudySummary &s : cached) {
        if (s.identity.patientId != me.patientId)
            continue;
        if (PriorStudy *p = offer(s.identity, s.modalities, QString())) {
            p->cachedInstances = s.instanceCount;
            p->instances = std::max(p->instances, s.instanceCount);
            if (p->bodyPart.isEmpty())
                p->bodyPart = bodyPartOf(s);
        }
    }
    for (const auto &[store, hits] : found) {
        for (const StudyHit &h : hits) {
            if (PriorStudy *p = offer(h.study.identity, h.study.modalitiesInStudy, store))
                p->instances = std::max(p->instances, h.study.relatedInstances);
        }
    }
    // Found here and there, but somewhere under another name (birth date, sex, issuer): not offered at all.
    out.studies.erase(std::remove_if(out.studies.begin(), out.studies.end(),
                                     [&](const PriorStudy &p) { return disagreeing.contains(p.identity.studyInstanceUid); }),
                      out.studies.end());
    for (const QString &uid : std::as_const(conflicted)) {
        if (uid == me.studyInstanceUid || withheld.contains(uid))
            continue;
        // Said only where this patient's ID asked for it: another patient's study in the cache is none of ours.
        const bool asked = std::any_of(found.begin(), found.end(), [&uid](const auto &f) {
            return std::any_of(f.second.begin(), f.second.end(), [&uid](const StudyHit &h) { return h.study.identity.studyInstanceUid == uid; });
        }) || std::any_of(cached.begin(), cached.end(), [&](const StudySummary &s) { return s.identity.studyInstanceUid == uid && s.identity.patientId == me.patientId; });
        if (asked)
            withheld.insert(uid, QStringLiteral("study %1: its Study Instance UID belongs to another patient elsewhere").arg(uid));
    }
    for (PriorStudy &p : out.studies)
        p.comparable = comparable(current, p);
    std::sort(out.studies.begin(), out.studies.end(), [](const PriorStudy &a, const PriorStudy &b) {
        const QString ka = a.identity.studyDate + a.identity.studyTime, kb = b.identity.studyDate + b.identity.studyTime;
        return ka != kb ? ka > kb : a.identity.studyInstanceUid < b.identity.studyInstanceUid;
    });
    for (auto it = withheld.begin(); it != withheld.end(); ++it) {
        const QStringList where = withheldWhere.value(it.key());
        out.withheld << it.value() + (where.isEmpty() ? QString() : QStringLiteral(" [%1]").arg(where.join(QStringLiteral(", "))));
    }
    out.withheld.sort();
    return out;
}

PriorSearch::PriorSearch(StoreRegistry *registry, const QList<StudySummary> &cached, const StudySummary &current, QObject *parent)
    : QObject(parent), m_registry(registry), m_cached(cached), m_current(current)
{
}

void PriorSearch::start()
{
    m_started = true;
    QStringList remote;
    if (m_registry && !m_current.identity.patientId.trimmed().isEmpty()) {
        for (const StoreConfig &s : m_registry->config().stores()) {
            if (!s.isTheCache())
                remote << s.name;
        }
    }
    m_pending = int(remote.size());
    rearrange();
    if (remote.isEmpty())
        return Q_EMIT finished();
    DicomQuery q;
    q.patientId = m_current.identity.patientId;
    // One job per store: a slow archive never holds back what the others already said.
    for (const QString &name : remote) {
        whenDone(m_registry->findStudies(q, {name}), this, [this, name](const Result<QList<StudyHit>> &r) {
            --m_pending;
            if (r.isOk())
                m_found.append({name, r.value()});
            else
                m_problems << QStringLiteral("%1: %2").arg(name, r.error().toString());
            rearrange();
            if (m_pending == 0)
                Q_EMIT finished();
        });
    }
}

void PriorSearch::setCached(const QList<StudySummary> &cached)
{
    m_cached = cached;
    if (m_started)
        rearrange();
}

void PriorSearch::rearrange()
{
    m_result = arrangePriors(m_current, m_cached, m_found);
    m_result.problems = m_problems;
    Q_EMIT changed();
}

} // namespace spectrum

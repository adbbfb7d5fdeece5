// SPDX-License-Identifier: Apache-2.0
// The workstation's study list: what the cache holds, as its index counts it (never every instance), refreshed as
// blobs come and go; a study's instances read when it is opened; the priors of studies a PACS pushes.
#include "shell/workstation.h"

#include "spectrum/stores/exchange/demoseeder.h"
#include "spectrum/stores/reading/priorprefetch.h"
#include "spectrum/stores/reading/priorsearch.h"

namespace spectrum {

namespace {

QString studyKey(const QString &studyUid, const QString &patientId)
{
    return studyUid + QLatin1Char('\n') + patientId;
}

constexpr int kLoadedKept = 16;  // studies open side by side, and their priors

} // namespace

const StudySummary *Workstation::findStudy(const QString &uidOrAlias) const
{
    QString uid = uidOrAlias;
    if (const auto demo = DemoArchive::fromAlias(uidOrAlias))
        uid = DemoArchive::studyUid(*demo);
    for (const StudySummary &s : m_studies) {
        if (s.identity.studyInstanceUid == uid)
            return &s;
    }
    return nullptr;
}

ResultJob<StudySummary> *Workstation::loadStudy(const StudySummary &study)
{
    if (!m_store)
        return failedJob<StudySummary>(Error(ErrorCode::NotFound, tr("the cache is not open")));
    const DicomIdentity listed = study.identity;
    const bool conflict = study.identityConflict;
    auto *job = chainJob<StudySummary>(loadStudies(m_store.get(), listed.studyInstanceUid),
                                       [listed, conflict](const QList<StudySummary> &all, const CancelToken &) -> Result<StudySummary> {
        for (const StudySummary &s : all) {
            if (s.identity.patientId != listed.patientId)
                continue;
            // The list's identity (the index's first instance) and the read one (the first by key) are the same
            // patient, or nothing is shown: instances that disagree on the patient are not mixed on one screen.
            // Every image of it names the same person (a sex recorded otherwise is flagged where shown, not refused).
            if (!s.patientDisagreement.isEmpty())
                return Error(ErrorCode::Corrupt, tr("the instances of study %1 in the cache disagree on the patient (%2): not shown")
                                                     .arg(listed.studyInstanceUid, s.patientDisagreement));
            if (const QString why = patientMismatch(listed, s.identity); !why.isEmpty())  // s: no sex when they differ
                return Error(ErrorCode::Corrupt, tr("the instances of study %1 in the cache disagree on the patient (%2): not shown")
                                                     .arg(listed.studyInstanceUid, why));
            StudySummary out = s;
            out.identityConflict = out.identityConflict || conflict;
            return out;
        }
        return Error(ErrorCode::NotFound, tr("study %1 of patient '%2' is no longer in the cache").arg(listed.studyInstanceUid, listed.patientId));
    });
    // Kept before the caller hears of it: what the caller then asks loadedStudy() is there.
    connect(job, &Job::finished, this, [this, job] {
        if (!job->result().isOk())
            return;
        const StudySummary &s = job->result().value();
        const QString key = studyKey(s.identity.studyInstanceUid, s.identity.patientId);
        m_loaded.insert(key, s);
        m_loadOrder.removeAll(key);
        m_loadOrder << key;
        while (m_loadOrder.size() > kLoadedKept)
            m_loaded.remove(m_loadOrder.takeFirst());
    });
    return job;
}

const StudySummary *Workstation::loadedStudy(const QString &studyUid, const QString &patientId) const
{
    const auto loaded = m_loaded.constFind(studyKey(studyUid, patientId));
    if (loaded == m_loaded.cend())
        return nullptr;
    const auto listed = m_listed.constFind(studyKey(studyUid, patientId));
    if (listed == m_listed.cend())
        return nullptr;
    const StudySummary &s = m_studies[*listed];
    return s.instanceCount == loaded->instanceCount && s.bytes == loaded->bytes && s.identityConflict == loaded->identityConflict ? &*loaded : nullptr;
}

void Workstation::forgetChangedLoads()
{
    for (const QString &key : QStringList(m_loadOrder)) {
        const auto l = m_loaded.constFind(key);
        if (l == m_loaded.cend() || !loadedStudy(l->identity.studyInstanceUid, l->identity.patientId)) {
            m_loaded.remove(key);
            m_loadOrder.removeAll(key);
        }
    }
}

void Workstation::notePushed(const QString &sopInstanceUid)
{
    // The instance's study, from the cache's record of it (the push says only the SOP Instance UID).
    whenDone(m_store->stat(sopInstanceUid), this, [this](const Result<BlobInfo> &info) {
        if (!info.isOk() || !info.value().dicom.isValid())
            return;
        const QString key = studyKey(info.value().dicom.studyInstanceUid, info.value().dicom.patientId);
        if (m_pushedDone.contains(key) || m_pushed.contains(key))
            return;  // a push of a whole study: its priors asked for once
        m_pushed.insert(key);
        prefetchPriorsOfPushed();
    });
}

void Workstation::prefetchPriorsOfPushed()
{
    if (!m_prefetcher || m_pushed.isEmpty())
        return;
    for (auto it = m_pushed.begin(); it != m_pushed.end();) {
        const auto listed = m_listed.constFind(*it);
        if (listed == m_listed.cend()) {
            ++it;  // not in the list yet: at its next refresh
            continue;
        }
        const StudySummary &s = m_studies[*listed];
        if (!s.identityConflict)  // two patients under one Study UID: nothing is fetched for it
            m_prefetcher->add(s);
        m_pushedDone.insert(*it);
        it = m_pushed.erase(it);
    }
}

void Workstation::refreshStudies()
{
    if (m_refreshJob) {  // one at a time; the newest state wins
        m_refreshAgain = true;
        return;
    }
    auto *job = m_store->studies(DicomQuery());
    m_refreshJob = job;
    connect(job, &Job::finished, this, [this, job] {
        m_refreshJob = nullptr;
        const bool again = m_refreshAgain;  // a newer state is waiting: this list may predate it
        m_refreshAgain = false;
        if (job->hasError()) {
            if (job->error().code() != ErrorCode::Cancelled)
                Q_EMIT errorOccurred(job->error());
        } else {
            m_studies = job->result().value();
            m_listed.clear();
            for (int i = 0; i < m_studies.size(); ++i)
                m_listed.insert(studyKey(m_studies[i].identity.studyInstanceUid, m_studies[i].identity.patientId), i);
            forgetChangedLoads();
            prefetchPriorsOfPushed();
            Q_EMIT studiesChanged();
        }
        if (again) {
            refreshStudies();
        } else if (m_seedingEndsAfterRefresh) {
            m_seedingEndsAfterRefresh = false;
            Q_EMIT seedingFinished();
        }
    });
    job->start(ExecutionPolicy::Async);
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#pragma once
// PriorSearch: a patient's other studies, to read the current one against — found in the workstation's cache
// and in every configured store at once, by Patient ID and Issuer of Patient ID, newest first.
//
// A study is offered only when it is plainly the same patient: the same Patient ID, no other issuer, and no
// other name, birth date or sex where both say one. A study whose Study Instance UID another patient also
// claims (the conflict the study browser flags) is never offered. What is held back is listed with the reason,
// so the reader knows something was left out and why.

#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QObject>

namespace spectrum {

struct PriorStudy
{
    DicomIdentity identity;      ///< study level
    QStringList modalities;
    QString bodyPart;            ///< from the cached series, when known
    QStringList stores;          ///< configured stores that hold it (the cache is not one of them)
    int instances = -1;          ///< as many as any place reported (−1: unknown)
    int cachedInstances = 0;     ///< in the workstation's cache
    bool comparable = false;     ///< same modality and the same body part or study description as the current

    bool isCached() const { return cachedInstances > 0 && (instances < 0 || cachedInstances >= instances); }
    /// Older than the current study (a prior, rather than a later study of the same patient).
    bool isEarlierThan(const DicomIdentity &current) const;
};

struct PriorList
{
    QList<PriorStudy> studies;  ///< newest first; the current study is not among them
    QStringList withheld;       ///< "2023-05-01 CT (PACS): another patient name (DOE^JANE)": found but not offered
    QStringList problems;       ///< stores that did not answer ("store: why")

    /// The most recent comparable study older than `current` (same modality, and body part or description);
    /// −1 when there is none.
    int mostRecentComparable(const DicomIdentity &current) const;
};

/// Why `other` is not plainly `current`'s patient — another Patient ID, issuer, name (as a reader reads it),
/// birth date or sex, where both say one — or empty when it is. The one rule for priors and what opens beside.
QString patientMismatch(const DicomIdentity &current, const DicomIdentity &other);

/// The offerable other studies of `current`'s patient among what the cache holds (`cached`) and what the
/// stores answered (`found`, per store), merged by study; see the header comment for what is held back.
PriorList arrangePriors(const StudySummary &current, const QList<StudySummary> &cached,
                        const QList<QPair<QString, QList<StudyHit>>> &found);

class PriorSearch : public QObject
{
    Q_OBJECT
public:
    /// Searches the cache (`cached`, the workstation's study list) at once and, when `registry` is set, every
    /// configured store but the local one.
    PriorSearch(StoreRegistry *registry, const QList<StudySummary> &cached, const StudySummary &current, QObject *parent = nullptr);

    void start();
    const PriorList &result() const { return m_result; }
    const StudySummary &current() const { return m_current; }
    bool isFinished() const { return m_pending == 0 && m_started; }
    /// The cache's studies changed (a prior prefetched, a push arrived): arranged again with what stores said.
    void setCached(const QList<StudySummary> &cached);

Q_SIGNALS:
    /// The list changed: the cache's answer, then each store's as it comes.
    void changed();
    /// Every store answered or failed.
    void finished();

private:
    void rearrange();

    StoreRegistry *m_registry;
    QList<StudySummary> m_cached;
    StudySummary m_current;
    QList<QPair<QString, QList<StudyHit>>> m_found;
    QStringList m_problems;
    PriorList m_result;
    int m_pending = 0;
    bool m_started = false;
};

} // namespace spectrum

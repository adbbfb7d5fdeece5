// SPDX-License-Identifier: Apache-2.0
#pragma once
// FindingsLoader: the Structured Reports, Key Object Selections and presentation states of a study, read into its
// FindingsModel. It reads each SR, KO and PR instance of the study from the cache as soon as it is there (off the GUI thread) — ours and other
// software's — and adds the findings it can draw on their images and the key image sets; what a document holds that
// cannot be drawn is kept, to be listed.

#include "findings/findingsmodel.h"
#include "findings/cachedreads.h"

#include "spectrum/core/resultjob.h"
#include "spectrum/imaging/documents/keyobjects.h"
#include "spectrum/imaging/documents/measurementreport.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QHash>
#include <QObject>
#include <QSet>

namespace spectrum {

class BlobStore;

class FindingsLoader : public QObject
{
    Q_OBJECT
public:
    /// `store` (the cache) and `model` must outlive the loader.
    FindingsLoader(BlobStore *store, FindingsModel *model, QObject *parent = nullptr);

    /// The study's reports (modality SR) are read once each is in the cache.
    void setStudy(const StudySummary &study);
    /// An instance of the study is in the cache now (it may be a report).
    void instanceCached(const QString &key);
    /// The reports read, by SOP Instance UID.
    const QHash<QString, ReadReport> &reports() const { return m_reports; }
    /// What the reports hold that is not drawn, one line each, naming the report.
    QStringList notShown() const;

Q_SIGNALS:
    /// A report was read (its findings are in the model).
    void reportRead(const QString &sopInstanceUid);
    /// A report could not be read: the reader is told, nothing is drawn from it.
    void reportFailed(const QString &key, const spectrum::Error &error);

private:
    void load(const QString &key);
    void read(const QString &key);
    void loadKeyObjects(const QString &key);
    void loadPresentationState(const QString &key);
    void failed(const QString &key, const Error &error);
    /// Reads blob `key` and parses it with `parse`, off the GUI thread.
    template <typename T>
    ResultJob<T> *readDocument(const QString &key, Result<T> (*parse)(const ByteView &));

    BlobStore *m_store;
    FindingsModel *m_model;
    QSet<QString> m_reportKeys;      ///< the study's reports and key object selections
    QSet<QString> m_keyObjectKeys;   ///< those of them that are key object selections
    QHash<QString, QStringList> m_keyNotShown;
    QSet<QString> m_presentationKeys;  ///< those that are presentation states
    QStringList m_otherNotShown;
    CachedReads m_reads;
    QHash<QString, ReadReport> m_reports;
    quint64 m_generation = 0;
};

/// "SR 2026-11-24 Reader^Rita": how a report is named beside its findings.
QString reportOrigin(const ReadReport &report);
/// "KO 2026-11-24 Reader^Rita": how a key image selection is named.
QString keySelectionOrigin(const KeyObjectSelection &selection);

} // namespace spectrum

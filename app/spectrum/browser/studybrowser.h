// SPDX-License-Identifier: Apache-2.0
#pragma once
// StudyBrowser: finds studies in every place the workstation can reach at once — its own cache and each store
// the hospital configured (DICOMweb, DIMSE, blobd) — by patient name (wildcards), patient ID, study date (today,
// yesterday, the last 7 or 30 days, or a range), modality and accession number. Each store answers on its own
// and its studies merge in as they come: one row per study and patient, saying where it lives and how much of it
// is already in the cache. The same Study Instance UID under two Patient IDs is never merged: two rows, flagged.
// A search can be saved by name (the Saved menu: which stores, what to prefetch of what it lists, how often it
// runs by itself); running one fills the form and hands what it lists to the prefetcher.

#include "spectrum/core/dicomquery.h"
#include "spectrum/stores/reading/savedsearch.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QAbstractTableModel>
#include <QWidget>

#include <optional>

class QComboBox;
class QDateEdit;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QToolButton;

namespace spectrum {

class Job;
class Workstation;

/// One study as found: its fields, where it is, how much of it is cached.
struct FoundStudy
{
    DicomIdentity identity;
    QStringList modalities;
    QString description;
    int instances = -1;        ///< as many as any store reported (−1: unknown)
    int cachedInstances = 0;   ///< in the workstation's cache
    QStringList stores;        ///< configured stores that hold it (the cache is not one of them)
    bool identityConflict = false;

    bool isCached() const { return cachedInstances > 0 && (instances < 0 || cachedInstances >= instances); }
};

class FoundStudyModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { Patient, PatientId, Date, Modality, Description, Images, Where, Cached, ColumnCount };
    enum Role { StudyUidRole = Qt::UserRole + 1, PatientIdRole, SortRole };

    explicit FoundStudyModel(QObject *parent = nullptr);

    /// The cache's studies (those matching the current query): replaces what came from the cache before.
    void setLocal(const QList<StudySummary> &studies);
    /// One store's answer, merged in.
    void addFromStore(const QString &store, const QList<DicomRecord> &studies);
    /// Forgets what the stores said (a new search).
    void clearStores();
    const FoundStudy *at(int row) const;

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void rebuild();

    QList<StudySummary> m_local;
    QList<QPair<QString, QList<DicomRecord>>> m_remote;
    QList<FoundStudy> m_rows;
};

class StudyBrowser : public QWidget
{
    Q_OBJECT
public:
    explicit StudyBrowser(Workstation *workstation, QWidget *parent = nullptr);

    /// The query the form describes (dates resolved against today), or the saved search being run.
    DicomQuery query() const;
    /// The form as a search to save (its dates relative where the form's are: "today", "last 7 days"); the
    /// saved search being run, as it is, when one is.
    SavedSearch currentSearch() const;
    /// The saved search whose rows are shown (none once the reader changes the form).
    const SavedSearch *activeSearch() const { return m_active ? &*m_active : nullptr; }
    QToolButton *savedButton() const { return m_savedButton; }
    /// The studies the table lists now, as the stores answered (for handing them on).
    QList<StudyHit> hits() const;
    QTableView *table() const { return m_table; }
    FoundStudyModel *model() const { return m_model; }
    /// The study in `row` of the table as sorted on screen.
    const FoundStudy *studyAtRow(int row) const;
    bool isSearching() const { return m_pending > 0; }

    // The form, for code and tests that fill it in.
    QLineEdit *patientNameField() const { return m_name; }
    QLineEdit *patientIdField() const { return m_id; }
    QLineEdit *accessionField() const { return m_accession; }
    QComboBox *modalityField() const { return m_modality; }
    QComboBox *datesField() const { return m_dates; }

public Q_SLOTS:
    /// Searches the cache and every configured store with the form's query.
    void search();
    /// Shows the cache's studies matching the form (no remote search).
    void refreshLocal();
    /// Asks for the selected studies that are not all cached to be fetched for later (prefetchRequested).
    void prefetchSelected();
    /// Fills the form with the saved search of that name and runs it; false when there is none.
    bool runSaved(const QString &name);
    /// Keeps `search` (replacing one of its name); the error says why not (shown in the status line too).
    Error saveSearch(const SavedSearch &search);
    /// Forgets the saved search of that name.
    bool deleteSaved(const QString &name);
    /// The dialog that saves the form's search.
    void saveCurrentSearch();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

Q_SIGNALS:
    /// The user chose a study (double click, Enter).
    void openRequested(const spectrum::FoundStudy &study);
    /// The user wants these studies in the cache for later reading (Prefetch).
    void prefetchRequested(const QList<spectrum::FoundStudy> &studies);
    /// Every store answered (or failed) for the last search.
    void searchFinished();
    /// A saved search that prefetches listed these studies (every store answered).
    void savedSearchListed(const spectrum::SavedSearch &search, const QList<spectrum::StudyHit> &hits);

private:
    void openCurrent();
    void fillSavedMenu();
    /// The form no longer shows a saved search.
    void leaveSaved();
    /// The configured archives (not the cache).
    QStringList archives() const;

    Workstation *m_workstation;
    QLineEdit *m_name;
    QLineEdit *m_id;
    QLineEdit *m_accession;
    QComboBox *m_modality;
    QComboBox *m_dates;
    QDateEdit *m_from;
    QDateEdit *m_to;
    QTableView *m_table;
    FoundStudyModel *m_model;
    QSortFilterProxyModel *m_sorted;
    QLabel *m_status;
    QToolButton *m_savedButton;
    std::optional<SavedSearch> m_active;
    QStringList m_answers;
    int m_pending = 0;
    quint64 m_generation = 0;  ///< answers of an older search are dropped
};

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::FoundStudy)

// SPDX-License-Identifier: Apache-2.0
#pragma once
// PriorsPanel: the patient's other studies, under the series list of the study being read — newest first, each
// with its date, modalities, description and where it is (here, or which archive), the comparable ones marked.
// Double-click (or Enter) opens one beside the current study; once open, its series are listed under it and can
// be dragged onto any pane. What was found under the Patient ID but not offered is said below the list, with why.

#include "spectrum/stores/reading/priorsearch.h"

#include <QWidget>

class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace spectrum {

class PriorsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit PriorsPanel(QWidget *parent = nullptr);

    /// "UID|Patient ID": how an open study is named in drags and by the viewer.
    static QString studyKey(const DicomIdentity &study) { return study.studyInstanceUid + QLatin1Char('|') + study.patientId; }

    /// The search's answer so far; `searching` while stores are still asked.
    void setPriors(const PriorList &priors, bool searching);
    const PriorList &priors() const { return m_priors; }
    /// A study of the list is open in the viewer: its series listed under it (draggable onto panes).
    void setOpened(const StudySummary &study);
    /// A study of the list is being fetched to open: said on its row.
    void setOpening(const QString &studyUid, const QString &state);
    /// A study opened beside was closed again (`why` on its row): its series are no longer offered.
    void setClosed(const QString &studyUid, const QString &why);
    /// The list's row of a study (−1: not listed).
    int indexOf(const QString &studyUid) const;
    QTreeWidget *tree() const { return m_tree; }
    QString statusText() const;

Q_SIGNALS:
    /// The reader asked to open study `index` of priors() beside the current one.
    void openRequested(int index);

private:
    void rebuild();

    QLabel *m_header;
    QTreeWidget *m_tree;
    QLabel *m_status;
    PriorList m_priors;
    bool m_searching = false;
    QHash<QString, StudySummary> m_opened;  ///< by study UID
    QHash<QString, QString> m_opening;      ///< by study UID: "fetching…", or why it failed
};

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "browser/priorspanel.h"
#include "viewer/seriespane.h"

#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QMimeData>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace spectrum {

namespace {

constexpr int kIndexRole = Qt::UserRole + 1;   // top-level rows: index in the prior list
constexpr int kSeriesRole = Qt::UserRole + 2;  // child rows: series index in the opened study
constexpr int kKeyRole = Qt::UserRole + 3;     // child rows: the opened study's key

/// The list: a series row drags as "study key\nseries index" onto a pane; Enter opens the study row.
class PriorTree : public QTreeWidget
{
public:
    PriorTree()
    {
        setDragEnabled(true);
        setDragDropMode(QAbstractItemView::DragOnly);
        setHeaderHidden(true);
        setRootIsDecorated(true);
        setIndentation(12);
        setWordWrap(true);
    }

protected:
    QMimeData *mimeData(const QList<QTreeWidgetItem *> &items) const override
    {
        auto *data = new QMimeData;
        if (!items.isEmpty() && items.first()->data(0, kSeriesRole).isValid()) {
            const QTreeWidgetItem *i = items.first();
            data->setData(otherStudySeriesMimeType(),
                          (i->data(0, kKeyRole).toString() + QLatin1Char('\n') + QString::number(i->data(0, kSeriesRole).toInt())).toUtf8());
        }
        return data;
    }
    QStringList mimeTypes() const override { return {otherStudySeriesMimeType()}; }
};

} // namespace

PriorsPanel::PriorsPanel(QWidget *parent) : QWidget(parent), m_header(new QLabel), m_tree(new PriorTree), m_status(new QLabel)
{
    setObjectName(QStringLiteral("priorsPanel"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(2);
    m_header->setText(tr("<b>Other studies of this patient</b>"));
    m_tree->setObjectName(QStringLiteral("priorsList"));
    m_tree->setToolTip(tr("Double-click a study to open it beside this one (Shift+P: the most recent comparable). "
                          "Drag a series of an open study onto any pane."));
    m_status->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("priorsStatus"));
    layout->addWidget(m_header);
    layout->addWidget(m_tree, 1);
    layout->addWidget(m_status);
    connect(m_tree, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem *item) {
        if (item && item->data(0, kIndexRole).isValid())
            Q_EMIT openRequested(item->data(0, kIndexRole).toInt());
    });
    rebuild();
}

void PriorsPanel::setPriors(const PriorList &priors, bool searching)
{
    m_priors = priors;
    m_searching = searching;
    rebuild();
}

void PriorsPanel::setOpened(const StudySummary &study)
{
    m_opened.insert(study.identity.studyInstanceUid, study);
    m_opening.remove(study.identity.studyInstanceUid);
    rebuild();
}

void PriorsPanel::setOpening(const QString &studyUid, const QString &state)
{
    m_opening.insert(studyUid, state);
    rebuild();
}

void PriorsPanel::setClosed(const QString &studyUid, const QString &why)
{
    m_opened.remove(studyUid);
    m_opening.insert(studyUid, why);
    rebuild();
}

int PriorsPanel::indexOf(const QString &studyUid) const
{
    for (int i = 0; i < m_priors.studies.size(); ++i) {
        if (m_priors.studies[i].identity.studyInstanceUid == studyUid)
            return i;
    }
    return -1;
}

QString PriorsPanel::statusText() const
{
    return m_status->text();
}

void PriorsPanel::rebuild()
{
    m_tree->clear();
    for (int i = 0; i < m_priors.studies.size(); ++i) {
        const PriorStudy &p = m_priors.studies[i];
        const QString where = p.isCached() ? tr("here") : p.cachedInstances > 0 ? tr("partly here; %1").arg(p.stores.join(QStringLiteral(", ")))
                                                                                 : p.stores.join(QStringLiteral(", "));
        QString text = tr("%1  %2%3\n%4 — %5")
                           .arg(DicomIdentity::displayDate(p.identity.studyDate), p.modalities.join(QLatin1Char('/')),
                                p.comparable ? tr("  ★") : QString(), p.identity.studyDescription, where);
        if (const QString state = m_opening.value(p.identity.studyInstanceUid); !state.isEmpty())
            text += QStringLiteral("\n") + state;
        auto *item = new QTreeWidgetItem(m_tree, {text});
        item->setData(0, kIndexRole, i);
        item->setToolTip(0, p.comparable ? tr("Comparable: the same modality and body part (or description). Double-click to open beside.")
                                         : tr("Double-click to open beside the current study."));
        if (const auto opened = m_opened.constFind(p.identity.studyInstanceUid); opened != m_opened.constEnd()) {
            for (int s = 0; s < opened->series.size(); ++s) {
                const SeriesSummary &series = opened->series[s];
                auto *child = new QTreeWidgetItem(item, {tr("%1 %2 (%3)").arg(series.modality, series.description.isEmpty() ? tr("Series %1").arg(series.seriesNumber)
                                                                                                                             : series.description)
                                                            .arg(series.instances.size())});
                child->setData(0, kSeriesRole, s);
                child->setData(0, kKeyRole, studyKey(opened->identity));
                child->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled);
            }
            item->setExpanded(true);
        }
    }
    QStringList lines;
    if (m_searching)
        lines << tr("Searching the archives…");
    else if (m_priors.studies.isEmpty())
        lines << tr("No other study of this patient was found.");
    for (const QString &w : m_priors.withheld)
        lines << tr("⚠ Not offered: %1").arg(w.toHtmlEscaped());
    for (const QString &p : m_priors.problems)
        lines << tr("⚠ No answer from %1").arg(p.toHtmlEscaped());  // "store: why"
    m_status->setText(lines.join(QStringLiteral("<br>")));
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
// A study's series as thumbnails (serieslist.h), and how the study viewer fills and listens to the list.
#include "viewer/serieslist.h"
#include "viewer/seriespane.h"
#include "viewer/studyviewer.h"

#include <QIcon>
#include <QMimeData>
#include <QPixmap>

namespace spectrum {

SeriesList::SeriesList()
{
    setDragEnabled(true);
    setDragDropMode(QAbstractItemView::DragOnly);
}

QMimeData *SeriesList::mimeData(const QList<QListWidgetItem *> &items) const
{
    auto *data = new QMimeData;
    if (!items.isEmpty())
        data->setData(seriesMimeType(), QByteArray::number(row(items.first())));
    return data;
}

QStringList SeriesList::mimeTypes() const
{
    return {seriesMimeType()};
}

void SeriesList::mousePressEvent(QMouseEvent *event)
{
    m_pressed = true;
    QListWidget::mousePressEvent(event);
}

void SeriesList::mouseReleaseEvent(QMouseEvent *event)
{
    QListWidget::mouseReleaseEvent(event);  // clicked() for a press and release on one item
    m_pressed = false;
}

void SeriesList::startDrag(Qt::DropActions actions)
{
    QListWidget::startDrag(actions);
    m_pressed = false;  // the drag took the release
    if (dragEnded)
        dragEnded();
}

namespace {
constexpr int kSeriesRole = Qt::UserRole;         ///< a row's series (its Series Instance UID)
constexpr int kThumbnailRole = Qt::UserRole + 1;  ///< the thumbnail its icon shows (QImage::cacheKey)
} // namespace

void StudyViewer::wireSeriesList()
{
    // The keys choose as they move; the mouse on release (a press may begin a drag to another pane). After a click
    // the keys are the pane's again: ↓ steps through the slices, not down the list.
    auto *list = static_cast<SeriesList *>(m_seriesList);
    connect(m_seriesList, &QListWidget::currentRowChanged, this, [this, list](int row) {
        if (!list->isPressed())
            showSeries(row);
    });
    connect(m_seriesList, &QListWidget::itemClicked, this, [this](QListWidgetItem *item) {
        showSeries(m_seriesList->row(item));
        if (m_active)
            m_active->viewport()->setFocus(Qt::MouseFocusReason);
    });
    list->dragEnded = [this] {
        const QSignalBlocker block(m_seriesList);
        m_seriesList->setCurrentRow(m_active && m_active->study() == &m_study ? m_active->seriesIndex() : -1);
    };
}

void StudyViewer::fillSeriesList()
{
    const QSignalBlocker block(m_seriesList);
    // Row by row, in place: a study laid out as it streams in is laid out again every half second, and its list
    // keeps its scroll position, its rows their thumbnails (a row whose series changed loses its own).
    for (int i = 0; i < m_study.series.size(); ++i) {
        const SeriesSummary &s = m_study.series[i];
        const QString name = s.description.isEmpty() ? tr("Series %1").arg(s.seriesNumber) : DicomIdentity::displayDescription(s.description);
        QString text, tip;
        if (isDocumentSeries(s)) {
            const QString kind = s.modality == QLatin1String("SR") ? tr("%n report(s)", nullptr, int(s.instances.size()))
                               : s.modality == QLatin1String("KO") ? tr("%n key image list(s)", nullptr, int(s.instances.size()))
                                                                   : tr("%n presentation state(s)", nullptr, int(s.instances.size()));
            text = tr("%1 %2\n%3 (in Findings)").arg(s.modality, name, kind);
            tip = tr("Shown over the images they refer to and listed in View > Findings (Ctrl+Shift+M)");
        } else if (isKeyImageSeries(s)) {
            text = tr("★ %1\n%2 image(s)").arg(name).arg(s.instances.size());
            tip = tr("The images a key object selection of this study names");
        } else {
            // Laid out as the study streams in: the count is what has come (the rest of the series may be on its way).
            text = m_study.partial ? tr("%1 %2\n%3 image(s) so far").arg(s.modality, name).arg(s.instances.size())
                                   : tr("%1 %2\n%3 image(s)").arg(s.modality, name).arg(s.instances.size());
            tip = tr("Series %1: %2").arg(s.seriesNumber).arg(s.description);  // as the archive has it
        }
        QListWidgetItem *item = m_seriesList->item(i);
        if (!item) {
            item = new QListWidgetItem;
            m_seriesList->addItem(item);
        }
        if (item->data(kSeriesRole).toString() != s.seriesInstanceUid) {
            item->setData(kSeriesRole, s.seriesInstanceUid);
            item->setData(kThumbnailRole, QVariant());
            item->setIcon(QIcon());
        }
        if (item->text() != text)
            item->setText(text);
        if (item->toolTip() != tip)
            item->setToolTip(tip);
        showThumbnailOnRow(i);  // (a list filled again after a save once lost them)
    }
    while (m_seriesList->count() > m_study.series.size())
        delete m_seriesList->takeItem(m_seriesList->count() - 1);
}

void StudyViewer::showThumbnailOnRow(int row)
{
    QListWidgetItem *item = m_seriesList->item(row);
    if (!item)
        return;
    // Its thumbnail if one is made, none where none is; the icon made again only when the thumbnail changed.
    const auto thumb = m_thumbnails.constFind(row);
    const bool wanted = thumb != m_thumbnails.cend() && !isDocumentSeries(m_study.series.value(row));
    const QVariant shown = wanted ? QVariant(thumb->cacheKey()) : QVariant();
    if (item->data(kThumbnailRole) == shown)
        return;
    item->setData(kThumbnailRole, shown);
    QIcon icon;
    if (wanted) {
        // The same pixels when the row is selected: an image is not tinted with the selection's colour, and no
        // tinted copy is left in Qt's pixmap cache once the study is closed (soak.sh: a working day filled it).
        const QPixmap pixmap = QPixmap::fromImage(*thumb);
        icon.addPixmap(pixmap, QIcon::Normal);
        icon.addPixmap(pixmap, QIcon::Selected);
    }
    item->setIcon(icon);
}

} // namespace spectrum

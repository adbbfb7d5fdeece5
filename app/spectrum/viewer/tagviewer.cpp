// SPDX-License-Identifier: Apache-2.0
#include "viewer/tagviewer.h"

#include "spectrum/core/job.h"
#include "spectrum/core/resultjob.h"
#include "spectrum/stores/blobs/blobstore.h"

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <functional>

namespace spectrum {

TagViewer::TagViewer(QWidget *parent) : QWidget(parent), m_filter(new QLineEdit), m_tree(new QTreeWidget), m_status(new QLabel)
{
    m_filter->setPlaceholderText(tr("Search tag, keyword or value"));
    m_filter->setClearButtonEnabled(true);
    m_tree->setColumnCount(4);
    m_tree->setHeaderLabels({tr("Tag"), tr("Keyword"), tr("VR"), tr("Value")});
    m_tree->setUniformRowHeights(true);
    m_tree->setAlternatingRowColors(true);
    setMinimumWidth(420);  // tag, keyword, VR and the start of the value at once
    m_tree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_tree->header()->setStretchLastSection(true);
    m_status->setWordWrap(true);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_filter);
    layout->addWidget(m_tree, 1);
    layout->addWidget(m_status);
    connect(m_filter, &QLineEdit::textChanged, this, &TagViewer::applyFilter);
}

void TagViewer::showInstance(BlobStore *store, const QString &key)
{
    if (key == m_key && m_tree->topLevelItemCount() > 0)
        return;
    m_key = key;
    const quint64 generation = ++m_generation;
    m_tree->clear();
    if (key.isEmpty() || !store) {
        m_status->setText(tr("No image in view."));
        return;
    }
    m_status->setText(tr("Reading…"));
    whenDone(store->read(key), this, [this, generation](const Result<ByteView> &bytes) {
        if (generation != m_generation)
            return;
        if (!bytes.isOk()) {
            m_status->setText(tr("Cannot read the image: %1").arg(bytes.error().toString()));
            return;
        }
        runOnPool<Result<QList<DicomTagRow>>>(blockingPool(), this, [view = bytes.value()] { return readDicomTags(view); },
                                              [this, generation](Result<QList<DicomTagRow>> &&rows) {
                                                  if (generation != m_generation)
                                                      return;
                                                  if (!rows.isOk()) {
                                                      m_status->setText(tr("Cannot read the elements: %1").arg(rows.error().toString()));
                                                      return;
                                                  }
                                                  fill(rows.value());
                                                  Q_EMIT shown();
                                              });
    });
}

void TagViewer::fill(const QList<DicomTagRow> &rows)
{
    m_tree->clear();
    std::function<void(QTreeWidgetItem *, const QList<DicomTagRow> &)> add = [&](QTreeWidgetItem *parent, const QList<DicomTagRow> &list) {
        for (const DicomTagRow &r : list) {
            auto *item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(m_tree);
            item->setText(0, r.vr.isEmpty() ? QString() : r.tagText());
            item->setText(1, r.keyword);
            item->setText(2, r.vr);
            item->setText(3, r.value);
            item->setToolTip(3, r.value);
            add(item, r.children);  // sequences start folded
        }
    };
    add(nullptr, rows);
    m_status->setText(tr("%n element(s)", nullptr, int(rows.size())));
    applyFilter();
}

void TagViewer::applyFilter()
{
    const QString needle = m_filter->text().trimmed();
    // Shows an item when it, or something inside it, matches; opens the sequences that hold a match.
    std::function<bool(QTreeWidgetItem *)> visit = [&](QTreeWidgetItem *item) {
        bool childMatches = false;
        for (int i = 0; i < item->childCount(); ++i)
            childMatches = visit(item->child(i)) || childMatches;
        const bool matches = needle.isEmpty() || item->text(0).contains(needle, Qt::CaseInsensitive) || item->text(1).contains(needle, Qt::CaseInsensitive)
                             || item->text(3).contains(needle, Qt::CaseInsensitive)
                             || item->text(0).remove(QLatin1Char(',')).contains(QString(needle).remove(QLatin1Char(',')), Qt::CaseInsensitive);
        item->setHidden(!matches && !childMatches);
        if (!needle.isEmpty())
            item->setExpanded(childMatches);
        return matches || childMatches;
    };
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i)
        visit(m_tree->topLevelItem(i));
    if (needle.isEmpty())
        m_tree->collapseAll();
}

} // namespace spectrum

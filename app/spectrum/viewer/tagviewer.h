// SPDX-License-Identifier: Apache-2.0
#pragma once
// TagViewer: every element of the image in view — tag, keyword, VR, value — as every peer shows it: searchable
// (by tag, keyword or value; the items holding a match open), sequences folded. Read off the GUI thread from the
// cache; follows the image the reader looks at (MainWindow).

#include "spectrum/imaging/dicomtags.h"

#include <QWidget>

class QLabel;
class QLineEdit;
class QTreeWidget;
class QTreeWidgetItem;

namespace spectrum {

class BlobStore;

class TagViewer : public QWidget
{
    Q_OBJECT
public:
    explicit TagViewer(QWidget *parent = nullptr);

    /// Shows the elements of the instance `key` of `store` (read and parsed on the pool); an empty key clears.
    void showInstance(BlobStore *store, const QString &key);
    QString instanceKey() const { return m_key; }
    QTreeWidget *tree() const { return m_tree; }
    QLineEdit *filterField() const { return m_filter; }

Q_SIGNALS:
    /// The elements of instanceKey() are on show.
    void shown();

private:
    void fill(const QList<DicomTagRow> &rows);
    void applyFilter();

    QLineEdit *m_filter;
    QTreeWidget *m_tree;
    QLabel *m_status;
    QString m_key;
    quint64 m_generation = 0;
};

} // namespace spectrum

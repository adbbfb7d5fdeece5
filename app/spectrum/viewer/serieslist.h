// SPDX-License-Identifier: Apache-2.0
#pragma once
// SeriesList: a study's series as thumbnails, dragged onto a pane to show them there. A series is chosen by a click
// (the button released where it was pressed, no drag) or by the keys — never by the press itself, which would put a
// dragged series into the active pane before it reaches the pane it is dragged to.

#include <QListWidget>

#include <functional>

namespace spectrum {

/// Dragging an item carries its series' index (seriesMimeType(): dropped on a pane, that pane shows it).
class SeriesList : public QListWidget
{
public:
    SeriesList();
    /// A mouse button is down on the list: the row it selects is not chosen yet.
    bool isPressed() const { return m_pressed; }
    /// After a drag (dropped or not): the row of the series in view again.
    std::function<void()> dragEnded;

protected:
    QMimeData *mimeData(const QList<QListWidgetItem *> &items) const override;
    QStringList mimeTypes() const override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void startDrag(Qt::DropActions actions) override;

private:
    bool m_pressed = false;
};

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#pragma once
// FindingsPanel: every finding of the study in view, where it lies and what it measures — drawn here (and whether
// it is saved) or read from a report, grouped by where it comes from; what a report holds that is not drawn is
// listed under it with why; the key images marked here and the study's key image selections, with the note the
// marked ones are saved with; the study's presentation states by series. Double-click a finding or a key image to go
// to its image, a presentation state to apply it.

#include <QPointer>
#include <QWidget>

class QLabel;
class QLineEdit;
class QTreeWidget;

namespace spectrum {

class StudyViewer;
struct Finding;

class FindingsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit FindingsPanel(QWidget *parent = nullptr);

    /// Follows `viewer`'s findings (none: empty).
    void setViewer(StudyViewer *viewer);
    QTreeWidget *tree() const { return m_tree; }
    /// One line per finding listed ("Distance — 42.1 mm | Series 1, image 6 · not saved"), and the
    /// lines of what is not shown, in the order shown: for tests and the read-back report.
    QStringList lines() const;

Q_SIGNALS:
    /// The reader asked to see the image finding `imageKey`/`index` lies on.
    void goToRequested(const QString &sopInstanceUid, int frame);
    /// The reader asked to apply presentation state `uid` of the study.
    void applyRequested(const QString &uid);

private:
    void rebuild();

    QPointer<StudyViewer> m_viewer;
    QLabel *m_header;
    QTreeWidget *m_tree;
    QLineEdit *m_keyNote;
    QLineEdit *m_reader;
};

} // namespace spectrum

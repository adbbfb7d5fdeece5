// SPDX-License-Identifier: Apache-2.0
#pragma once
// ProtocolsDialog: the hanging protocols in the order they are tried — move one up or down, duplicate, delete,
// edit its JSON (checked as it is applied, the problem said where), test it on the study in view (whether it
// matches and what goes in which pane), or go back to the built-in set.

#include "spectrum/stores/reading/hangingprotocol.h"

#include <QDialog>

class QLabel;
class QListWidget;
class QPlainTextEdit;

namespace spectrum {

class ProtocolsDialog : public QDialog
{
    Q_OBJECT
public:
    /// `study`: the study in view, to test protocols on (may be null).
    ProtocolsDialog(const ProtocolSet &protocols, const StudySummary *study, QWidget *parent = nullptr);

    const ProtocolSet &protocols() const { return m_set; }
    QListWidget *list() const { return m_list; }
    QPlainTextEdit *editor() const { return m_editor; }
    /// What the last check or test said.
    QString message() const;

    /// The editor's text as protocol `row`; false (and message() says why) when it is not a usable protocol.
    bool applyEdit();
    void moveCurrent(int step);
    void duplicateCurrent();
    void deleteCurrent();
    void restoreBuiltIns();
    /// Whether the current protocol matches the study given, and its plan, in message().
    void testCurrent();

private:
    void fillList();
    void showCurrent();

    ProtocolSet m_set;
    const StudySummary *m_study;
    QListWidget *m_list;
    QPlainTextEdit *m_editor;
    QLabel *m_message;
    bool m_edited = false;  ///< the editor's text differs from the protocol shown
};

} // namespace spectrum

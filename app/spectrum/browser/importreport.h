// SPDX-License-Identifier: Apache-2.0
#pragma once
// ImportReport: what an import brought in and what it left out, file by file, with why in words — shown after an
// import from the window (files dropped, File ▸ Import) whenever something was left out, never a cut-off status
// line. Not modal: the studies that came in can be read meanwhile.

#include "spectrum/stores/exchange/dicomimport.h"

#include <QDialog>

namespace spectrum {

class Workstation;

class ImportReport : public QDialog
{
    Q_OBJECT
public:
    ImportReport(const ImportSummary &summary, Workstation *workstation, QWidget *parent = nullptr);

    /// The report's rows as shown: file name, then what happened to it.
    const QList<QPair<QString, QString>> &rows() const { return m_rows; }
    /// The studies imported but flagged (their images disagree on the patient's sex), as the report says them.
    const QStringList &flagged() const { return m_flagged; }

    /// Whether an import's outcome needs a report: something was left out (other than a disc's DICOMDIR), or a
    /// study came in flagged.
    static bool worthShowing(const ImportSummary &summary);
    /// A reason as a reader reads it: control characters and undecodable bytes shown as such, never raw.
    static QString inWords(const QString &why);

private:
    QList<QPair<QString, QString>> m_rows;
    QStringList m_flagged;
};

} // namespace spectrum

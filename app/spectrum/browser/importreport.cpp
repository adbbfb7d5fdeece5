// SPDX-License-Identifier: Apache-2.0
#include "browser/importreport.h"

#include "shell/workstation.h"

#include <QDialogButtonBox>

#include <algorithm>

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace spectrum {

bool ImportReport::worthShowing(const ImportSummary &summary)
{
    // A disc's DICOMDIR is read, not lost: it alone is no news.
    const bool onlyIndexes = std::all_of(summary.notDicom.begin(), summary.notDicom.end(), [](const QString &f) {
        return QFileInfo(f).fileName().compare(QLatin1String("DICOMDIR"), Qt::CaseInsensitive) == 0;
    });
    return !onlyIndexes || !summary.failed.isEmpty() || !summary.duplicates.isEmpty() || !summary.flagged.isEmpty();
}

QString ImportReport::inWords(const QString &why)
{
    QString out;
    for (const QChar c : why) {
        if (c == QChar::ReplacementCharacter)
            out += tr("[unreadable byte]");
        else if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            out += QStringLiteral("[%1]").arg(c.unicode(), 2, 16, QLatin1Char('0'));
        else
            out += c;
    }
    return out;
}

ImportReport::ImportReport(const ImportSummary &summary, Workstation *workstation, QWidget *parent) : QDialog(parent)
{
    setObjectName(QStringLiteral("importReport"));
    setWindowTitle(tr("Import report"));
    auto *layout = new QVBoxLayout(this);
    QStringList studies;
    for (const QString &uid : summary.studies)
        if (const StudySummary *s = workstation->findStudy(uid))
            studies << tr("%1 — %2 %3").arg(DicomIdentity::displayName(s->identity.patientName), DicomIdentity::displayDate(s->identity.studyDate),
                                           s->identity.studyDescription);
    auto *head = new QLabel(tr("<b>%1</b>%2").arg(Workstation::importSummaryText(summary).toHtmlEscaped(),
                                                  studies.isEmpty() ? QString() : QStringLiteral("<br>") + studies.join(QStringLiteral("<br>")).toHtmlEscaped()));
    // Studies imported with something their images disagree on: said above the files left out, as each is read.
    for (const auto &[study, why] : summary.flagged)
        m_flagged << tr("⚠ %1: %2").arg(study, inWords(why));
    if (!m_flagged.isEmpty())
        head->setText(head->text() + QStringLiteral("<br><br>") + m_flagged.join(QStringLiteral("<br>")).toHtmlEscaped());
    head->setWordWrap(true);
    head->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(head);
    auto *tree = new QTreeWidget;
    tree->setObjectName(QStringLiteral("importReportFiles"));
    tree->setHeaderLabels({tr("File"), tr("Left out because")});
    tree->setRootIsDecorated(false);
    tree->setAlternatingRowColors(true);
    for (int i = 0; i < summary.notDicom.size(); ++i)
        m_rows << qMakePair(summary.notDicom[i], inWords(summary.notDicomWhy.value(i, tr("not a DICOM file"))));
    for (const auto &[file, why] : summary.failed)
        m_rows << qMakePair(file, inWords(why));
    for (const auto &[file, why] : summary.duplicates)
        m_rows << qMakePair(file, inWords(why));
    for (const auto &[file, why] : std::as_const(m_rows)) {
        auto *item = new QTreeWidgetItem(tree, {QFileInfo(file).fileName(), why});
        item->setToolTip(0, file);
        item->setToolTip(1, why);
    }
    tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    tree->header()->setStretchLastSection(true);
    layout->addWidget(tree, 1);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    resize(760, 420);
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "viewer/protocolsdialog.h"

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace spectrum {

ProtocolsDialog::ProtocolsDialog(const ProtocolSet &protocols, const StudySummary *study, QWidget *parent)
    : QDialog(parent), m_set(protocols), m_study(study), m_list(new QListWidget), m_editor(new QPlainTextEdit), m_message(new QLabel)
{
    setWindowTitle(tr("Hanging protocols"));
    resize(900, 600);
    m_list->setObjectName(QStringLiteral("protocolList"));
    m_editor->setObjectName(QStringLiteral("protocolEditor"));
    m_editor->setFont(QFont(QStringLiteral("monospace")));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *buttons = new QVBoxLayout;
    auto button = [&](const QString &text, auto slot) {
        auto *b = new QPushButton(text);
        connect(b, &QPushButton::clicked, this, slot);
        buttons->addWidget(b);
        return b;
    };
    button(tr("Move &up"), [this] { moveCurrent(-1); });
    button(tr("Move &down"), [this] { moveCurrent(1); });
    button(tr("D&uplicate"), [this] { duplicateCurrent(); });
    button(tr("De&lete"), [this] { deleteCurrent(); });
    buttons->addSpacing(12);
    button(tr("&Apply edit"), [this] { applyEdit(); });
    button(tr("&Test on the study in view"), [this] { testCurrent(); })->setEnabled(m_study != nullptr);
    buttons->addStretch(1);
    button(tr("&Built-in set"), [this] { restoreBuiltIns(); });

    auto *top = new QHBoxLayout;
    top->addWidget(m_list, 1);
    top->addWidget(m_editor, 2);
    top->addLayout(buttons);
    auto *box = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel);
    connect(box, &QDialogButtonBox::accepted, this, [this] {
        if (applyEdit())  // an edit not applied yet is kept, unless it is wrong: then the dialog stays, saying why
            accept();
    });
    connect(box, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top, 1);
    layout->addWidget(m_message);
    layout->addWidget(box);
    connect(m_list, &QListWidget::currentRowChanged, this, &ProtocolsDialog::showCurrent);
    connect(m_editor, &QPlainTextEdit::textChanged, this, [this] { m_edited = true; });
    fillList();
}

QString ProtocolsDialog::message() const
{
    return m_message->text();
}

void ProtocolsDialog::fillList()
{
    const int row = std::max(0, m_list->currentRow());
    const QSignalBlocker block(m_list);
    m_list->clear();
    for (const HangingProtocol &p : m_set.protocols)
        m_list->addItem(p.name);
    m_list->setCurrentRow(std::min(row, int(m_set.protocols.size()) - 1));
    showCurrent();
}

void ProtocolsDialog::showCurrent()
{
    const int row = m_list->currentRow();
    m_editor->setPlainText(row >= 0 ? QString::fromUtf8(QJsonDocument(m_set.protocols[row].toJson()).toJson(QJsonDocument::Indented)) : QString());
    m_edited = false;
}

bool ProtocolsDialog::applyEdit()
{
    const int row = m_list->currentRow();
    if (row < 0 || !m_edited)
        return true;
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(m_editor->toPlainText().toUtf8(), &error);
    if (error.error != QJsonParseError::NoError) {
        m_message->setText(tr("⚠ Not JSON: %1 at character %2").arg(error.errorString()).arg(error.offset));
        return false;
    }
    Result<HangingProtocol> p = HangingProtocol::fromJson(doc.object());
    if (!p.isOk()) {
        m_message->setText(tr("⚠ %1").arg(p.error().message()));
        return false;
    }
    m_set.protocols[row] = p.takeValue();
    m_message->setText(tr("“%1” changed.").arg(m_set.protocols[row].name));
    fillList();
    return true;
}

void ProtocolsDialog::moveCurrent(int step)
{
    const int row = m_list->currentRow(), to = row + step;
    if (!applyEdit() || row < 0 || to < 0 || to >= m_set.protocols.size())
        return;
    m_set.protocols.move(row, to);
    m_list->setCurrentRow(to);
    fillList();
}

void ProtocolsDialog::duplicateCurrent()
{
    const int row = m_list->currentRow();
    if (!applyEdit() || row < 0)
        return;
    HangingProtocol copy = m_set.protocols[row];
    copy.name = tr("%1 (copy)").arg(copy.name);
    m_set.protocols.insert(row + 1, copy);
    m_list->setCurrentRow(row + 1);
    fillList();
}

void ProtocolsDialog::deleteCurrent()
{
    const int row = m_list->currentRow();
    if (row < 0)
        return;
    m_set.protocols.removeAt(row);
    m_edited = false;
    fillList();
}

void ProtocolsDialog::restoreBuiltIns()
{
    m_set = ProtocolSet::builtIn();
    m_edited = false;
    fillList();
    m_message->setText(tr("The built-in protocols (your own are gone once you save)."));
}

void ProtocolsDialog::testCurrent()
{
    const int row = m_list->currentRow();
    if (!m_study || row < 0 || !applyEdit())
        return;
    const HangingProtocol &p = m_set.protocols[row];
    QStringList lines;
    for (bool withPrior : {false, true}) {
        if (!m_set.matches(row, *m_study, withPrior)) {
            lines << (withPrior ? tr("With a prior: does not match.") : tr("Without a prior: does not match."));
            continue;
        }
        // Tested with the study as its own stand-in prior: what matters is which of its series go where.
        const HangingPlan plan = m_set.plan(row, *m_study, withPrior ? m_study : nullptr);
        QStringList panes;
        for (int i = 0; i < plan.panes.size(); ++i) {
            const PanePlacement &pp = plan.panes[i];
            const QString what = pp.study < 0 ? tr("nothing") : QStringLiteral("%1 “%2”").arg(pp.study == 1 ? tr("prior") : tr("current"),
                                                                                             m_study->series[pp.series].description);
            panes << tr("%1: %2%3").arg(i + 1).arg(what, pp.window.isEmpty() ? QString() : tr(" (%1)").arg(pp.window));
        }
        lines << tr("%1: matches, %2 × %3 — %4%5").arg(withPrior ? tr("With a prior") : tr("Without a prior")).arg(plan.rows).arg(plan.columns)
                     .arg(panes.join(QStringLiteral("; ")), plan.mpr ? tr(" — pane 1's series in MPR (axial, coronal, sagittal)") : QString());
    }
    m_message->setText(tr("“%1” on “%2”:\n%3").arg(p.name, m_study->identity.studyDescription, lines.join(QLatin1Char('\n'))));
}

} // namespace spectrum

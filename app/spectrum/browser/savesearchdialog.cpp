// SPDX-License-Identifier: Apache-2.0
#include "browser/savesearchdialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace spectrum {

namespace {

QString describe(const SavedSearch &s)
{
    QStringList parts;
    if (!s.patientName.isEmpty())
        parts << QObject::tr("patient %1").arg(s.patientName);
    if (!s.patientId.isEmpty())
        parts << QObject::tr("ID %1").arg(s.patientId);
    if (!s.accessionNumber.isEmpty())
        parts << QObject::tr("accession %1").arg(s.accessionNumber);
    if (!s.modality.isEmpty())
        parts << s.modality;
    if (!s.description.isEmpty())
        parts << QObject::tr("\"%1\"").arg(s.description);
    switch (s.dates.kind) {
    case DatePeriod::Any: parts << QObject::tr("any date"); break;
    case DatePeriod::Today: parts << QObject::tr("today's (on the day it runs)"); break;
    case DatePeriod::Yesterday: parts << QObject::tr("yesterday's (the day before it runs)"); break;
    case DatePeriod::LastDays: parts << QObject::tr("the last %1 days (up to the day it runs)").arg(s.dates.days); break;
    case DatePeriod::Between: parts << QObject::tr("dated %1").arg(s.dates.toText()); break;
    }
    return parts.join(QStringLiteral(", "));
}

} // namespace

SaveSearchDialog::SaveSearchDialog(const SavedSearch &search, const QStringList &stores, const QStringList &taken, QWidget *parent)
    : QDialog(parent), m_search(search), m_taken(taken), m_name(new QLineEdit(search.name)), m_prefetch(new QComboBox), m_priors(new QSpinBox),
      m_every(new QSpinBox), m_stores(new QListWidget), m_summary(new QLabel(describe(search))), m_problem(new QLabel)
{
    setWindowTitle(tr("Save this search"));
    m_name->setPlaceholderText(tr("Today's CT at the main PACS"));
    m_taken.removeAll(search.name);  // saving it again under its own name replaces it
    m_prefetch->addItem(tr("Nothing: list them"), int(SavedSearch::Prefetch::None));
    m_prefetch->addItem(tr("Prefetch their comparable priors"), int(SavedSearch::Prefetch::Priors));
    m_prefetch->addItem(tr("Prefetch the studies and their priors"), int(SavedSearch::Prefetch::StudiesAndPriors));
    m_prefetch->setCurrentIndex(m_prefetch->findData(int(search.prefetch)));
    m_priors->setRange(1, 10);
    m_priors->setValue(search.priorsPerStudy);
    m_priors->setSuffix(tr(" per study, most recent first"));
    m_every->setRange(0, 1440);
    m_every->setSpecialValueText(tr("only when I run it"));
    m_every->setPrefix(tr("every "));
    m_every->setSuffix(tr(" minutes"));
    m_every->setValue(search.everyMinutes);
    for (const QString &name : stores) {
        auto *item = new QListWidgetItem(name, m_stores);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(search.stores.isEmpty() || search.stores.contains(name) ? Qt::Checked : Qt::Unchecked);
    }
    m_stores->setMaximumHeight(110);
    m_summary->setWordWrap(true);
    m_problem->setWordWrap(true);
    m_problem->setObjectName(QStringLiteral("problem"));
    m_problem->setStyleSheet(QStringLiteral("color: #ff9a7a"));

    auto *form = new QFormLayout;
    form->addRow(tr("Name:"), m_name);
    form->addRow(tr("Finds:"), m_summary);
    form->addRow(tr("Asks:"), m_stores);
    form->addRow(tr("Then:"), m_prefetch);
    form->addRow(tr("Priors:"), m_priors);
    form->addRow(tr("Runs:"), m_every);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, &SaveSearchDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &SaveSearchDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_problem);
    layout->addWidget(buttons);

    connect(m_name, &QLineEdit::textChanged, this, &SaveSearchDialog::check);
    connect(m_prefetch, &QComboBox::currentIndexChanged, this, &SaveSearchDialog::check);
    connect(m_every, &QSpinBox::valueChanged, this, &SaveSearchDialog::check);
    connect(m_stores, &QListWidget::itemChanged, this, &SaveSearchDialog::check);
    check();
}

SavedSearch SaveSearchDialog::search() const
{
    SavedSearch s = m_search;
    s.name = m_name->text().trimmed();
    s.prefetch = SavedSearch::Prefetch(m_prefetch->currentData().toInt());
    s.priorsPerStudy = m_priors->value();
    s.everyMinutes = m_every->value();
    s.stores.clear();
    bool all = true;
    for (int i = 0; i < m_stores->count(); ++i) {
        if (m_stores->item(i)->checkState() == Qt::Checked)
            s.stores << m_stores->item(i)->text();
        else
            all = false;
    }
    if (all)
        s.stores.clear();  // every archive: those added later too
    return s;
}

QString SaveSearchDialog::problem() const
{
    const SavedSearch s = search();
    if (m_taken.contains(s.name))
        return tr("A saved search is named \"%1\" already.").arg(s.name);
    if (m_stores->count() > 0 && s.stores.isEmpty() && m_stores->item(0)->checkState() != Qt::Checked)
        return tr("Choose the stores it asks.");
    if (Error e = s.validate(); e.isError())
        return e.message();
    return QString();
}

void SaveSearchDialog::check()
{
    m_priors->setEnabled(m_prefetch->currentData().toInt() != int(SavedSearch::Prefetch::None));
    m_problem->setText(problem());
}

void SaveSearchDialog::accept()
{
    check();
    if (!m_problem->text().isEmpty())
        return;
    QDialog::accept();
}

} // namespace spectrum

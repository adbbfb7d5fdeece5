#include "filterpanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace spectrum {

namespace {
/// "gaussian:sigma=1": the filter with its parameters' defaults, as a starting point to edit.
QString defaultSpec(const FilterInfo &info)
{
    QStringList values;
    for (const FilterParameter &p : info.parameters)
        values << QStringLiteral("%1=%2").arg(p.name, p.defaultValue.toString());
    return values.isEmpty() ? info.name : info.name + QLatin1Char(':') + values.join(QLatin1Char(','));
}
} // namespace

FilterPanel::FilterPanel(QWidget *parent)
    : QWidget(parent), m_registry(FilterRegistry::withPlugins()), m_choose(new QComboBox), m_list(new QListWidget),
      m_on(new QCheckBox(tr("Apply (T)"))), m_status(new QLabel)
{
    for (const FilterInfo &f : m_registry.filters()) {
        m_choose->addItem(f.name, defaultSpec(f));
        m_choose->setItemData(m_choose->count() - 1, f.description + (f.origin == QLatin1String("built-in") ? QString() : tr(" (plugin %1)").arg(f.origin)),
                              Qt::ToolTipRole);
    }
    auto *add = new QPushButton(tr("Add"));
    auto *remove = new QPushButton(tr("Remove"));
    auto *clear = new QPushButton(tr("Clear"));
    m_list->setToolTip(tr("Double-click a filter to edit its parameters, e.g. gaussian:sigma=2"));
    m_list->setObjectName(QStringLiteral("filterChain"));
    m_status->setWordWrap(true);
    m_on->setChecked(true);
    connect(add, &QPushButton::clicked, this, [this] {
        auto *item = new QListWidgetItem(m_choose->currentData().toString());
        item->setFlags(item->flags() | Qt::ItemIsEditable);
        m_list->addItem(item);
        rebuild();
    });
    connect(remove, &QPushButton::clicked, this, [this] {
        delete m_list->currentItem();
        rebuild();
    });
    connect(clear, &QPushButton::clicked, this, [this] { setSpecs({}); });
    connect(m_list, &QListWidget::itemChanged, this, &FilterPanel::rebuild);
    connect(m_on, &QCheckBox::toggled, this, &FilterPanel::rebuild);

    auto *pick = new QHBoxLayout;
    pick->addWidget(m_choose, 1);
    pick->addWidget(add);
    auto *edit = new QHBoxLayout;
    edit->addWidget(remove);
    edit->addWidget(clear);
    edit->addStretch();
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(pick);
    layout->addWidget(m_list, 1);
    layout->addLayout(edit);
    layout->addWidget(m_on);
    layout->addWidget(m_status);
}

QStringList FilterPanel::specs() const
{
    QStringList out;
    for (int i = 0; i < m_list->count(); ++i)
        out << m_list->item(i)->text().trimmed();
    return out;
}

bool FilterPanel::isApplied() const
{
    return m_on->isChecked();
}

void FilterPanel::setSpecs(const QStringList &specs)
{
    const QSignalBlocker block(m_list);
    m_list->clear();
    for (const QString &s : specs) {
        auto *item = new QListWidgetItem(s);
        item->setFlags(item->flags() | Qt::ItemIsEditable);
        m_list->addItem(item);
    }
    rebuild();
}

void FilterPanel::setApplied(bool on)
{
    m_on->setChecked(on);  // rebuilds through toggled() when it changes
}

void FilterPanel::rebuild()
{
    const QStringList chainSpecs = specs();
    m_problem.clear();
    m_chain = FilterChain();
    if (!chainSpecs.isEmpty()) {
        Result<FilterChain> made = m_registry.makeChain(chainSpecs);
        if (made.isOk())
            m_chain = made.value();
        else
            m_problem = made.error().message();
    }
    const bool on = isApplied() && m_problem.isEmpty() && !m_chain.isEmpty();
    m_status->setText(!m_problem.isEmpty() ? tr("⚠ %1").arg(m_problem)
                      : chainSpecs.isEmpty() ? tr("No filter: the original image.")
                      : on ? tr("On the image in view, and on rows as they arrive.") : tr("Off: the original image."));
    Q_EMIT chainChanged(on ? m_chain : FilterChain(), on ? chainSpecs.join(QStringLiteral(" → ")) : QString());
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "viewer/filterpanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QMessageBox>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

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
    : QWidget(parent), m_registry(FilterRegistry::withPlugins()),
      m_presetBox(new QComboBox), m_choose(new QComboBox), m_list(new QListWidget), m_on(new QCheckBox(tr("Apply (T)"))), m_status(new QLabel)
{
    for (const FilterInfo &f : m_registry.filters()) {
        m_choose->addItem(f.name, defaultSpec(f));
        m_choose->setItemData(m_choose->count() - 1, f.description + (f.aliases.isEmpty() ? QString() : tr(" (also: %1)").arg(f.aliases.join(QStringLiteral(", "))))
                                                         + (f.origin == QLatin1String("built-in") ? QString() : tr(" (plugin %1)").arg(f.origin)),
                              Qt::ToolTipRole);
    }
    auto *add = new QPushButton(tr("Add"));
    auto *remove = new QPushButton(tr("Remove"));
    auto *clear = new QPushButton(tr("Clear"));
    m_list->setToolTip(tr("Double-click a filter to edit its parameters, e.g. gaussian:sigma=2"));
    m_list->setObjectName(QStringLiteral("filterChain"));
    m_status->setWordWrap(true);
    m_on->setChecked(true);
    // Any edit by hand makes the chain the reader's own, no longer the preset's.
    connect(add, &QPushButton::clicked, this, [this] {
        auto *item = new QListWidgetItem(m_choose->currentData().toString());
        item->setFlags(item->flags() | Qt::ItemIsEditable);
        m_list->addItem(item);
        m_presetName.clear();
        rebuild();
    });
    connect(remove, &QPushButton::clicked, this, [this] {
        delete m_list->currentItem();
        m_presetName.clear();
        rebuild();
    });
    connect(clear, &QPushButton::clicked, this, [this] { setSpecs({}); });
    connect(m_list, &QListWidget::itemChanged, this, [this] {
        m_presetName.clear();
        rebuild();
    });
    connect(m_on, &QCheckBox::toggled, this, &FilterPanel::rebuild);

    m_presetBox->setObjectName(QStringLiteral("filterPresets"));
    m_presetBox->setToolTip(tr("Named chains you saved; one saved for a modality opens every study of it filtered."));
    auto *usePreset = new QPushButton(tr("Use"));
    auto *savePreset = new QPushButton(tr("Save as preset…"));
    auto *deletePreset = new QPushButton(tr("Delete preset"));
    connect(usePreset, &QPushButton::clicked, this, [this] {
        const int i = m_presetBox->currentIndex();
        if (i >= 0 && i < m_presets.size())
            setState(m_presets[i].specs, true, m_presets[i].name);
    });
    connect(savePreset, &QPushButton::clicked, this, &FilterPanel::saveAsPresetInteractively);
    connect(deletePreset, &QPushButton::clicked, this, [this] {
        const int i = m_presetBox->currentIndex();
        if (i < 0 || i >= m_presets.size())
            return;
        if (QMessageBox::question(this, tr("Delete preset"), tr("Delete the preset “%1”?").arg(m_presets[i].name)) == QMessageBox::Yes)
            removePreset(m_presets[i].name);
    });
    fillPresetBox();

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
    auto *presetRow = new QHBoxLayout;
    presetRow->addWidget(m_presetBox, 1);
    presetRow->addWidget(usePreset);
    auto *presetEdit = new QHBoxLayout;
    presetEdit->addWidget(savePreset);
    presetEdit->addWidget(deletePreset);
    presetEdit->addStretch();
    layout->addWidget(new QLabel(tr("Presets")));
    layout->addLayout(presetRow);
    layout->addLayout(presetEdit);
    layout->addWidget(m_status);
}

QString FilterPanel::description() const
{
    const QString chain = specs().join(QStringLiteral(" → "));
    return m_presetName.isEmpty() ? chain : tr("preset “%1”: %2").arg(m_presetName, chain);
}

void FilterPanel::setPresets(const QList<FilterPreset> &presets)
{
    m_presets.clear();
    for (const FilterPreset &p : presets) {
        if (!p.name.trimmed().isEmpty() && !p.specs.isEmpty())
            m_presets << p;
    }
    fillPresetBox();
    Q_EMIT presetsChanged();
}

bool FilterPanel::savePreset(const FilterPreset &preset, bool replace)
{
    FilterPreset p = preset;
    p.name = p.name.trimmed();
    if (p.name.isEmpty() || p.specs.isEmpty() || !m_registry.makeChain(p.specs).isOk())
        return false;
    const auto same = std::find_if(m_presets.begin(), m_presets.end(), [&](const FilterPreset &o) { return o.name == p.name; });
    if (same != m_presets.end() && !replace)
        return false;
    if (!p.modality.isEmpty()) {
        for (FilterPreset &o : m_presets) {
            if (o.modality == p.modality)
                o.modality.clear();  // one preset opens a modality's studies
        }
    }
    if (same != m_presets.end())
        *same = p;
    else
        m_presets << p;
    fillPresetBox();
    Q_EMIT presetsChanged();
    return true;
}

void FilterPanel::removePreset(const QString &name)
{
    m_presets.erase(std::remove_if(m_presets.begin(), m_presets.end(), [&](const FilterPreset &p) { return p.name == name; }), m_presets.end());
    fillPresetBox();
    Q_EMIT presetsChanged();
}

std::optional<FilterPreset> FilterPanel::presetFor(const QStringList &modalities) const
{
    for (const FilterPreset &p : m_presets) {
        if (!p.modality.isEmpty() && modalities.contains(p.modality))
            return p;
    }
    return std::nullopt;
}

void FilterPanel::setCurrentModalities(const QStringList &modalities)
{
    m_modalities = modalities;
}

void FilterPanel::fillPresetBox()
{
    const QSignalBlocker block(m_presetBox);
    m_presetBox->clear();
    for (const FilterPreset &p : m_presets)
        m_presetBox->addItem(p.modality.isEmpty() ? p.name : tr("%1 (opens %2 studies)").arg(p.name, p.modality));
    m_presetBox->setEnabled(!m_presets.isEmpty());
}

void FilterPanel::saveAsPresetInteractively()
{
    if (specs().isEmpty() || !m_problem.isEmpty()) {
        QMessageBox::information(this, tr("Save as preset"), tr("Make a working chain first: a preset is saved from the filters listed."));
        return;
    }
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Save the chain as a preset"));
    auto *name = new QLineEdit(m_presetName);
    auto *forModality = new QCheckBox;
    const QString modality = m_modalities.isEmpty() ? QString() : m_modalities.first();
    forModality->setText(modality.isEmpty() ? tr("Open studies of this modality with it") : tr("Open every %1 study with it").arg(modality));
    forModality->setEnabled(!modality.isEmpty());
    auto *form = new QFormLayout(&dialog);
    form->addRow(tr("Name"), name);
    form->addRow(new QLabel(specs().join(QStringLiteral(" → "))));
    form->addRow(forModality);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted || name->text().trimmed().isEmpty())
        return;
    const FilterPreset preset{name->text().trimmed(), specs(), forModality->isChecked() ? modality : QString()};
    bool replace = false;
    if (std::any_of(m_presets.begin(), m_presets.end(), [&](const FilterPreset &p) { return p.name == preset.name; })) {
        if (QMessageBox::question(this, tr("Save as preset"), tr("A preset named “%1” exists. Replace it?").arg(preset.name)) != QMessageBox::Yes)
            return;
        replace = true;
    }
    if (savePreset(preset, replace)) {
        m_presetName = preset.name;
        rebuild();
    }
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

void FilterPanel::setState(const QStringList &specs, bool applied, const QString &preset)
{
    {
        const QSignalBlocker block(m_on);
        m_on->setChecked(applied);
    }
    setSpecs(specs, preset);
}

void FilterPanel::setSpecs(const QStringList &specs, const QString &preset)
{
    m_presetName = preset;
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
    // Filters that move pixels would put every value, region, mask and orientation letter on the wrong side of
    // the patient: on screen, the view's own flip and rotate keep them in place.
    for (const QString &spec : chainSpecs) {
        const QString name = spec.section(QLatin1Char(':'), 0, 0).trimmed();
        if (m_problem.isEmpty() && (name == QLatin1String("flip") || name == QLatin1String("rotate"))) {
            m_problem = tr("%1 moves the image's pixels; on screen use View ▸ Flip / Rotate (H, V, [ ]), which keep values, "
                           "measurements and orientation in place").arg(name);
            m_chain = FilterChain();
        }
    }
    const bool on = isApplied() && m_problem.isEmpty() && !m_chain.isEmpty();
    m_status->setText(!m_problem.isEmpty() ? tr("⚠ %1").arg(m_problem)
                      : chainSpecs.isEmpty() ? tr("No filter: the original image.")
                      : on ? tr("On the image in view, and on rows as they arrive.") : tr("Off: the original image."));
    Q_EMIT chainChanged(on ? m_chain : FilterChain(), on ? description() : QString());
}

} // namespace spectrum

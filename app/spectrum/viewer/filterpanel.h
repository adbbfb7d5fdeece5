// SPDX-License-Identifier: Apache-2.0
#pragma once
// FilterPanel: the filters a radiologist stacks on the image in view — any of the registry's (built-in and
// plugins), each with its parameters ("gaussian:sigma=2"), in order, switched on and off as a whole to compare
// with the original. The chain it shows is the open study's (MainWindow keeps one per study, on the image in view
// and on rows as they arrive): a chain never follows the reader to another patient's study. Only a preset — a
// named chain saved on purpose, optionally for one modality — opens studies filtered, and says its name.

#include "spectrum/imaging/filters/filterregistry.h"

#include <QWidget>

#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QListWidget;

namespace spectrum {

/// A named filter chain the radiologist saved. With a modality, every study of it opens through the chain.
struct FilterPreset
{
    QString name;
    QStringList specs;
    QString modality;  ///< "CT", …; empty: applied only by hand

    bool operator==(const FilterPreset &o) const { return name == o.name && specs == o.specs && modality == o.modality; }
};

class FilterPanel : public QWidget
{
    Q_OBJECT
public:
    explicit FilterPanel(QWidget *parent = nullptr);

    /// The chain as specs, in order ("gaussian:sigma=2"), and whether it is on.
    QStringList specs() const;
    bool isApplied() const;
    /// The chain made from the specs (empty when off or when a spec is invalid; see problem()).
    FilterChain chain() const { return m_chain; }
    QString problem() const { return m_problem; }
    const FilterRegistry &registry() const { return m_registry; }
    /// How the chain is named on the images: "preset “Bone”: sharpen → …" or the specs joined.
    QString description() const;
    /// The preset the chain came from, while it is unedited; empty otherwise.
    QString presetName() const { return m_presetName; }

    QList<FilterPreset> presets() const { return m_presets; }
    void setPresets(const QList<FilterPreset> &presets);
    /// Saves `preset` (a new name, or `replace` an existing one; false when the name is taken and not replaced,
    /// or empty). A preset naming a modality takes it from any other preset.
    bool savePreset(const FilterPreset &preset, bool replace = false);
    void removePreset(const QString &name);
    /// The preset studies of these modalities open with, if one was saved for any of them.
    std::optional<FilterPreset> presetFor(const QStringList &modalities) const;
    /// The modalities of the study in view (offered when a preset is saved).
    void setCurrentModalities(const QStringList &modalities);

public Q_SLOTS:
    /// Replaces the chain ("name:key=value" each); `preset` names it when it is a preset's.
    void setSpecs(const QStringList &specs, const QString &preset = QString());
    /// Replaces the chain and its switch at once, with one chainChanged().
    void setState(const QStringList &specs, bool applied, const QString &preset = QString());
    /// Asks for a name (and whether the study's modality opens with it), then saves the chain as a preset.
    void saveAsPresetInteractively();
    void setApplied(bool on);
    void toggle() { setApplied(!isApplied()); }

Q_SIGNALS:
    /// The chain or its switch changed: `chain` is what to apply (empty: the original), `description` names it.
    void chainChanged(const spectrum::FilterChain &chain, const QString &description);

Q_SIGNALS:
    void presetsChanged();

private:
    void rebuild();
    void fillPresetBox();

    FilterRegistry m_registry;
    QList<FilterPreset> m_presets;
    QString m_presetName;
    QStringList m_modalities;
    QComboBox *m_presetBox;
    QComboBox *m_choose;
    QListWidget *m_list;
    QCheckBox *m_on;
    QLabel *m_status;
    FilterChain m_chain;
    QString m_problem;
};

} // namespace spectrum

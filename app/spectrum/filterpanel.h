#pragma once
// FilterPanel: the filters a radiologist stacks on the image in view — any of the registry's (built-in and
// plugins), each with its parameters ("gaussian:sigma=2"), in order, switched on and off as a whole to compare
// with the original. The chain it describes applies to the study viewers (MainWindow), on the image in view
// and on rows as they arrive.

#include "spectrum/imaging/filterregistry.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QListWidget;

namespace spectrum {

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

public Q_SLOTS:
    /// Replaces the chain ("name:key=value" each).
    void setSpecs(const QStringList &specs);
    void setApplied(bool on);
    void toggle() { setApplied(!isApplied()); }

Q_SIGNALS:
    /// The chain or its switch changed: `chain` is what to apply (empty: the original), `description` names it.
    void chainChanged(const spectrum::FilterChain &chain, const QString &description);

private:
    void rebuild();

    FilterRegistry m_registry;
    QComboBox *m_choose;
    QListWidget *m_list;
    QCheckBox *m_on;
    QLabel *m_status;
    FilterChain m_chain;
    QString m_problem;
};

} // namespace spectrum

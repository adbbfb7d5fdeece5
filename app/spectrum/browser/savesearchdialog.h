// SPDX-License-Identifier: Apache-2.0
#pragma once
// SaveSearchDialog: keeps the browser's search under a name — which stores it asks, what is done with what it
// lists (nothing, its priors prefetched, the studies and their priors), and how often it runs by itself. The
// dates stay relative ("today" is today's on every run).

#include "spectrum/stores/reading/savedsearch.h"

#include <QDialog>

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QSpinBox;

namespace spectrum {

class SaveSearchDialog : public QDialog
{
    Q_OBJECT
public:
    /// `search`: the browser's form as a search (its name empty, or the saved search it came from);
    /// `stores`: the configured archives to choose from; `taken`: names of searches saved already.
    SaveSearchDialog(const SavedSearch &search, const QStringList &stores, const QStringList &taken, QWidget *parent = nullptr);

    /// The search as the dialog says now (validate() may still refuse it).
    SavedSearch search() const;
    QLineEdit *nameField() const { return m_name; }
    QComboBox *prefetchField() const { return m_prefetch; }
    QSpinBox *priorsField() const { return m_priors; }
    QSpinBox *everyField() const { return m_every; }
    QListWidget *storesField() const { return m_stores; }
    QString problem() const;

    void accept() override;

private:
    void check();

    SavedSearch m_search;
    QStringList m_taken;
    QLineEdit *m_name;
    QComboBox *m_prefetch;
    QSpinBox *m_priors;
    QSpinBox *m_every;
    QListWidget *m_stores;
    QLabel *m_summary;
    QLabel *m_problem;
};

} // namespace spectrum

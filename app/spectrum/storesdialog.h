#pragma once
// StoresDialog: the archives this workstation reads from and sends to, as the hospital's IT configures them —
// add, edit and remove each kind of store (DICOMweb, DIMSE, blobd), test a connection with a clear result, and
// keep credentials out of the configuration file in clear (sealed with the workstation's key; typed passwords
// and tokens are never shown again). Saves the configuration (owner-only) and hands it to the workstation.

#include "spectrum/stores/storeconfig.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QSpinBox;

namespace spectrum {

class Workstation;

class StoresDialog : public QDialog
{
    Q_OBJECT
public:
    explicit StoresDialog(Workstation *workstation, QWidget *parent = nullptr);

    const StoreConfigFile &config() const { return m_config; }
    /// The result line of the last test or save ("pacs: connection OK", "⚠ …").
    QString status() const;

    // The form, for code and tests that fill it in.
    QLineEdit *nameField() const { return m_name; }
    QComboBox *kindField() const { return m_kind; }
    QLineEdit *urlField() const { return m_url; }
    QComboBox *authField() const { return m_auth; }
    QLineEdit *userField() const { return m_user; }
    QLineEdit *secretField() const { return m_secret; }
    QLineEdit *hostField() const { return m_host; }
    QSpinBox *portField() const { return m_port; }
    QLineEdit *aeTitleField() const { return m_aeTitle; }
    QCheckBox *tlsField() const { return m_tls; }
    QLineEdit *caFileField() const { return m_caFile; }

public Q_SLOTS:
    /// The form as a store: added, or replacing the one of that name. Saved at once.
    void saveStore();
    void removeStore();
    /// Tests the store in the form (as typed, before saving): C-ECHO, a QIDO request, a blobd listing.
    void testStore();
    /// An empty form for a new store.
    void newStore();

Q_SIGNALS:
    void tested(bool ok, const QString &message);

private:
    void showStore(const QString &name);
    Result<StoreConfig> formStore() const;
    void refreshList();
    void updateFields();
    void setStatus(const QString &text, bool ok);
    /// Saves `next` (when it has a file) and hands it to the workstation; false (and a status) if it cannot.
    bool apply(const StoreConfigFile &next);

    Workstation *m_workstation;
    StoreConfigFile m_config;
    QListWidget *m_list;
    QLineEdit *m_name;
    QComboBox *m_kind;
    QLineEdit *m_url;
    QComboBox *m_auth;
    QLineEdit *m_user;
    QLineEdit *m_secret;
    QLineEdit *m_host;
    QSpinBox *m_port;
    QLineEdit *m_aeTitle;
    QLineEdit *m_ourAeTitle;
    QComboBox *m_retrieve;
    QCheckBox *m_tls;
    QLineEdit *m_caFile;
    QSpinBox *m_parallel;
    QLabel *m_status;
};

} // namespace spectrum

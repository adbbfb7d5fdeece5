// SPDX-License-Identifier: Apache-2.0
#pragma once
// StoresDialog: the archives this workstation reads from and sends to, as the hospital's IT configures them —
// add, edit and remove each kind of store (DICOMweb, DIMSE, blobd), test a connection with a clear result, and
// keep credentials out of the configuration file in clear (sealed with the workstation's key; typed passwords
// and tokens are never shown again). Saves the configuration (owner-only) and hands it to the workstation.

#include "spectrum/stores/archives/archivekind.h"

#include <QDialog>

class QCheckBox;
class QFormLayout;
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
    QLineEdit *mirrorsField() const { return m_mirrors; }
    QComboBox *authField() const { return m_auth; }
    QLineEdit *userField() const { return m_user; }
    QLineEdit *secretField() const { return m_secret; }
    QLineEdit *hostField() const { return m_host; }
    QSpinBox *portField() const { return m_port; }
    QLineEdit *aeTitleField() const { return m_aeTitle; }
    QCheckBox *tlsField() const { return m_tls; }
    QLineEdit *caFileField() const { return m_caFile; }
    QLineEdit *issuerField() const { return m_issuer; }
    QLineEdit *clientIdField() const { return m_clientId; }
    QLineEdit *audienceField() const { return m_audience; }
    QLineEdit *stsUrlField() const { return m_stsUrl; }
    QLineEdit *roleArnField() const { return m_roleArn; }
    QLineEdit *bucketField() const { return m_bucket; }
    QLineEdit *prefixField() const { return m_prefix; }
    QLineEdit *regionField() const { return m_region; }
    QLineEdit *accessKeyField() const { return m_accessKey; }
    QCheckBox *virtualHostField() const { return m_virtualHost; }
    QSpinBox *timeoutField() const { return m_timeout; }
    QLineEdit *workstationAeTitleField() const { return m_wsAeTitle; }
    QSpinBox *workstationPortField() const { return m_wsPort; }
    /// Whether the form holds edits not saved yet.
    bool hasUnsavedChanges() const { return m_dirty; }
    /// The store the form shows (empty: a new one).
    QString editing() const { return m_editing; }
    /// Whether a field's row is on show (only the fields of the chosen kind are).
    bool isFieldShown(QWidget *field) const;

public Q_SLOTS:
    /// The form as a store: a new one (refused when the name is taken), or the one being edited (renamed if its
    /// name changed, refused onto another's name). Saved at once.
    void saveStore();
    /// Removes the store being edited (the Remove button asks first).
    void removeStore();
    /// This workstation's own AE title and Storage SCP port (the Storage SCP follows).
    void saveWorkstation();
    /// Tests the store in the form (as typed, before saving): C-ECHO, a QIDO request, a blobd listing.
    void testStore();
    /// An empty form for a new store.
    void newStore();

Q_SIGNALS:
    void tested(bool ok, const QString &message);

protected:
    void reject() override;

private:
    /// m_auth's choices for a store of `kind` (the one chosen kept where the kind has it).
    void fillAuthChoices(StoreKind kind);
    /// Unsaved edits: asks whether to drop them; true to go on.
    bool mayDropEdits();
    void showStore(const QString &name);
    /// The kind the form is of: the list's choice, or the edited store's own when the list does not offer it.
    StoreKind kindInForm() const;
    Result<StoreConfig> formStore() const;
    void refreshList();
    void updateFields();
    void setStatus(const QString &text, bool ok);
    /// Every field's row at its default (a new store's).
    void clearFields();
    /// The rows that show a store's fields (not its name, kind or secret), each with its field.
    QList<std::pair<QWidget *, StoreField>> fieldWidgets() const;
    /// A field's value (as ArchiveKind::value() gives it) into its row, and out of it.
    static void setFieldValue(QWidget *widget, const QVariant &value);
    static QVariant fieldValue(QWidget *widget, StoreField field);
    /// Saves `next` (when it has a file) and hands it to the workstation; false (and a status) if it cannot.
    bool apply(const StoreConfigFile &next);

    Workstation *m_workstation;
    StoreConfigFile m_config;
    QListWidget *m_list;
    QLineEdit *m_name;
    QComboBox *m_kind;
    QLineEdit *m_url;
    QLineEdit *m_mirrors = nullptr;  ///< dicomweb: the archive's other servers, space-separated
    QComboBox *m_auth;
    QLineEdit *m_user;
    QLineEdit *m_secret;
    QLineEdit *m_host;
    QSpinBox *m_port;
    QLineEdit *m_aeTitle;
    QLineEdit *m_ourAeTitle;
    QSpinBox *m_timeout;
    QLineEdit *m_wsAeTitle;
    QSpinBox *m_wsPort;
    QFormLayout *m_form = nullptr;
    QString m_editing;
    bool m_dirty = false;
    bool m_filling = false;  ///< the form is being filled from a store: not an edit
    QComboBox *m_retrieve;
    QCheckBox *m_tls;
    QLineEdit *m_caFile;
    QLineEdit *m_issuer = nullptr;     ///< dicomweb, "oidc": the identity provider, Spectrum's client there, the API
    QLineEdit *m_clientId = nullptr;
    QLineEdit *m_audience = nullptr;
    QLineEdit *m_stsUrl = nullptr;     ///< s3, "oidc": the security token service, the role readers take
    QLineEdit *m_roleArn = nullptr;
    StoreKind m_authChoicesFor = StoreKind::DicomWeb;  ///< the kind whose ways to authenticate m_auth offers
    QLineEdit *m_bucket = nullptr;     ///< s3
    QLineEdit *m_prefix = nullptr;
    QLineEdit *m_region = nullptr;
    QLineEdit *m_accessKey = nullptr;
    QCheckBox *m_virtualHost = nullptr;
    QSpinBox *m_parallel;
    QLabel *m_status;
};

} // namespace spectrum

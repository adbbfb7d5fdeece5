// SPDX-License-Identifier: Apache-2.0
#include "stores/storesdialog.h"
#include "spectrum/stores/archives/archivekind.h"

#include "shell/workstation.h"

#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/transfer/dimse.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace spectrum {

StoresDialog::StoresDialog(Workstation *workstation, QWidget *parent)
    : QDialog(parent), m_workstation(workstation), m_config(workstation->storeConfig()), m_list(new QListWidget), m_name(new QLineEdit),
      m_kind(new QComboBox), m_url(new QLineEdit), m_auth(new QComboBox), m_user(new QLineEdit), m_secret(new QLineEdit),
      m_host(new QLineEdit), m_port(new QSpinBox), m_aeTitle(new QLineEdit), m_ourAeTitle(new QLineEdit), m_timeout(new QSpinBox),
      m_wsAeTitle(new QLineEdit), m_wsPort(new QSpinBox), m_retrieve(new QComboBox),
      m_tls(new QCheckBox(tr("DICOM TLS"))),
      m_caFile(new QLineEdit), m_parallel(new QSpinBox), m_status(new QLabel)
{
    setWindowTitle(tr("Stores"));
    resize(820, 480);
    for (const ArchiveKind *k : archiveKinds())
        if (k->offeredInDialog())
            m_kind->addItem(k->name(), int(k->kind()));
    m_mirrors = new QLineEdit;
    m_mirrors->setPlaceholderText(tr("none   or   https://pacs-b.example.org/dicom-web …"));
    m_mirrors->setToolTip(tr("Other servers of the same archive (an Orthanc cluster over one database and storage), same path and "
                             "credentials, separated by spaces: a study's series are fetched from all of them, and a server that "
                             "stops answering is left for the others"));
    m_bucket = new QLineEdit;
    m_prefix = new QLineEdit;
    m_prefix->setPlaceholderText(tr("none, or like spectrum/"));
    m_region = new QLineEdit(QStringLiteral("us-east-1"));
    m_region->setToolTip(tr("The bucket's region: part of every signature (us-east-1 where the store does not care)"));
    m_accessKey = new QLineEdit;
    m_virtualHost = new QCheckBox(tr("bucket.host addressing (AWS)"));
    m_virtualHost->setToolTip(tr("Address the bucket as BUCKET.HOST, as AWS does; on-premises stores usually want HOST/BUCKET"));
    fillAuthChoices(StoreKind::DicomWeb);
    m_stsUrl = new QLineEdit;
    m_stsUrl->setPlaceholderText(tr("the store's own (MinIO, SeaweedFS, Ceph)   or   https://sts.amazonaws.com"));
    m_stsUrl->setToolTip(tr("Where the reader's sign-in is traded for S3 credentials of their own that expire within the hour "
                            "(AssumeRoleWithWebIdentity)"));
    m_roleArn = new QLineEdit;
    m_roleArn->setPlaceholderText(tr("arn:aws:iam::123456789012:role/radiology-readers   or none"));
    m_roleArn->setToolTip(tr("The role readers take at the store; none where the service picks it from the sign-in"));
    m_issuer = new QLineEdit;
    m_issuer->setPlaceholderText(tr("https://sso.hospital.org/realms/radiology"));
    m_clientId = new QLineEdit;
    m_clientId->setPlaceholderText(tr("spectrum"));
    m_audience = new QLineEdit;
    m_audience->setPlaceholderText(tr("the PACS's API, as the identity provider names it"));
    m_secret->setEchoMode(QLineEdit::Password);
    m_port->setRange(0, 65535);
    m_parallel->setRange(1, 64);
    m_parallel->setValue(6);
    m_retrieve->addItem(tr("C-GET"), QStringLiteral("get"));
    m_retrieve->addItem(tr("C-MOVE to this workstation"), QStringLiteral("move"));
    m_url->setPlaceholderText(tr("https://pacs.example.org/dicom-web   or   blob://host:port   or   https://s3.example.org"));
    m_tls->setToolTip(tr("Associations over TLS (BCP 195): the PACS must show a certificate from the trusted CA naming its host; "
                         "this workstation's certificate (workstation.tls) goes to a PACS that asks for one"));
    m_caFile->setPlaceholderText(tr("the system's CAs"));
    m_caFile->setToolTip(tr("A PEM file with the hospital's CA: the archive's certificate must come from it (HTTPS, blobs://, DICOM TLS)"));
    m_status->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("storesStatus"));

    m_timeout->setRange(1, 3600);
    m_timeout->setSuffix(tr(" s"));
    m_timeout->setValue(30);
    m_timeout->setToolTip(tr("How long an answer may take before the archive counts as not answering"));
    m_wsPort->setRange(1, 65535);
    auto *form = new QFormLayout;
    m_form = form;
    form->addRow(tr("Name"), m_name);
    form->addRow(tr("Kind"), m_kind);
    form->addRow(tr("URL"), m_url);
    form->addRow(tr("Same archive at"), m_mirrors);
    form->addRow(tr("Authentication"), m_auth);
    form->addRow(tr("User"), m_user);
    form->addRow(tr("Identity provider"), m_issuer);
    form->addRow(tr("Client ID"), m_clientId);
    form->addRow(tr("Token audience"), m_audience);
    form->addRow(tr("Token service (STS)"), m_stsUrl);
    form->addRow(tr("Role (ARN)"), m_roleArn);
    form->addRow(tr("Bucket"), m_bucket);
    form->addRow(tr("Key prefix"), m_prefix);
    form->addRow(tr("Region"), m_region);
    form->addRow(tr("Addressing"), m_virtualHost);
    form->addRow(tr("Access key ID"), m_accessKey);
    form->addRow(tr("Password / token / secret key"), m_secret);
    form->addRow(tr("Host"), m_host);
    form->addRow(tr("Port"), m_port);
    form->addRow(tr("Its AE title"), m_aeTitle);
    form->addRow(tr("Our AE title"), m_ourAeTitle);
    form->addRow(tr("Retrieve by"), m_retrieve);
    form->addRow(tr("Security"), m_tls);
    form->addRow(tr("Trusted CA file"), m_caFile);
    form->addRow(tr("At once"), m_parallel);
    form->addRow(tr("Timeout"), m_timeout);

    auto *add = new QPushButton(tr("New"));
    auto *save = new QPushButton(tr("Save"));
    auto *remove = new QPushButton(tr("Remove"));
    auto *test = new QPushButton(tr("Test connection"));
    connect(add, &QPushButton::clicked, this, [this] {
        if (mayDropEdits())
            newStore();
    });
    connect(save, &QPushButton::clicked, this, &StoresDialog::saveStore);
    connect(remove, &QPushButton::clicked, this, [this] {
        if (m_editing.isEmpty())
            return setStatus(tr("Choose a store in the list to remove it."), false);
        if (QMessageBox::question(this, tr("Remove store"), tr("Remove the store “%1”? Studies it holds stay where they are; this "
                                                              "workstation no longer searches or opens them there.").arg(m_editing))
            == QMessageBox::Yes)
            removeStore();
    });
    connect(test, &QPushButton::clicked, this, &StoresDialog::testStore);
    auto *buttons = new QHBoxLayout;
    for (QPushButton *b : {add, save, remove, test})
        buttons->addWidget(b);
    buttons->addStretch();
    auto *close = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);

    // This workstation's own identity on the network: what PACSs push to, and C-MOVE sends to.
    m_wsAeTitle->setText(m_config.workstation.aeTitle);
    m_wsPort->setValue(m_config.workstation.storagePort);
    auto *ownForm = new QFormLayout;
    ownForm->addRow(tr("This workstation's AE title"), m_wsAeTitle);
    ownForm->addRow(tr("Its Storage SCP port"), m_wsPort);
    auto *saveOwn = new QPushButton(tr("Save"));
    saveOwn->setObjectName(QStringLiteral("saveWorkstation"));
    connect(saveOwn, &QPushButton::clicked, this, &StoresDialog::saveWorkstation);
    ownForm->addRow(QString(), saveOwn);
    auto *right = new QVBoxLayout;
    right->addLayout(form);
    right->addLayout(buttons);
    right->addWidget(m_status);
    right->addStretch();
    right->addLayout(ownForm);
    auto *body = new QHBoxLayout;
    m_list->setFixedWidth(300);
    body->addWidget(m_list);
    body->addLayout(right, 1);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(body, 1);
    layout->addWidget(new QLabel(tr("Saved in %1 (readable by you only); passwords and tokens are sealed with the key beside it.")
                                     .arg(m_config.path().isEmpty() ? tr("memory") : m_config.path())));
    layout->addWidget(close);

    connect(m_kind, &QComboBox::currentIndexChanged, this, &StoresDialog::updateFields);
    connect(m_auth, &QComboBox::currentIndexChanged, this, &StoresDialog::updateFields);
    connect(m_tls, &QCheckBox::toggled, this, &StoresDialog::updateFields);
    connect(m_url, &QLineEdit::textChanged, this, &StoresDialog::updateFields);
    connect(m_list, &QListWidget::currentTextChanged, this, [this](const QString &text) {
        const QString name = text.section(QLatin1Char(' '), 0, 0);
        if (name == m_editing)
            return;
        if (!mayDropEdits()) {  // back to the store being edited
            const QSignalBlocker block(m_list);
            for (int i = 0; i < m_list->count(); ++i)
                if (m_list->item(i)->text().section(QLatin1Char(' '), 0, 0) == m_editing)
                    m_list->setCurrentRow(i);
            return;
        }
        showStore(name);
    });
    // Any change to the form is an edit, until saved or dropped.
    for (QLineEdit *e : {m_name, m_url, m_mirrors, m_user, m_secret, m_host, m_aeTitle, m_ourAeTitle, m_caFile, m_bucket, m_prefix, m_region, m_accessKey,
                         m_issuer, m_clientId, m_audience, m_stsUrl, m_roleArn})
        connect(e, &QLineEdit::textEdited, this, [this] { m_dirty = !m_filling; });
    for (QComboBox *c : {m_kind, m_auth, m_retrieve})
        connect(c, &QComboBox::currentIndexChanged, this, [this] { m_dirty = m_dirty || !m_filling; });
    for (QSpinBox *b : {m_port, m_parallel, m_timeout})
        connect(b, &QSpinBox::valueChanged, this, [this] { m_dirty = m_dirty || !m_filling; });
    for (QCheckBox *c : {m_tls, m_virtualHost})
        connect(c, &QCheckBox::toggled, this, [this] { m_dirty = m_dirty || !m_filling; });
    // A store added from the command line meanwhile shows up.
    connect(m_workstation, &Workstation::storeConfigChanged, this, [this] {
        m_config = m_workstation->storeConfig();
        refreshList();
    });
    refreshList();
    newStore();
}

bool StoresDialog::isFieldShown(QWidget *field) const
{
    int row = -1;
    QFormLayout::ItemRole role;
    m_form->getWidgetPosition(field, &row, &role);
    return row >= 0 && field->isVisibleTo(const_cast<StoresDialog *>(this));
}

bool StoresDialog::mayDropEdits()
{
    if (!m_dirty)
        return true;
    const QString what = m_editing.isEmpty() ? tr("the new store") : tr("“%1”").arg(m_editing);
    const auto answer = QMessageBox::question(this, tr("Unsaved changes"), tr("Save the changes to %1?").arg(what),
                                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel)
        return false;
    if (answer == QMessageBox::Save) {
        saveStore();
        return !m_dirty;  // a refused save keeps the dialog where it is
    }
    m_dirty = false;
    return true;
}

void StoresDialog::reject()
{
    if (mayDropEdits())
        QDialog::reject();
}

void StoresDialog::saveWorkstation()
{
    StoreConfigFile next = m_config;
    next.workstation.aeTitle = m_wsAeTitle->text().trimmed();
    next.workstation.storagePort = m_wsPort->value();
    if (!isValidAeTitle(next.workstation.aeTitle))
        return setStatus(tr("“%1” is not an AE title: 1 to 16 printable ASCII characters, no backslash.").arg(next.workstation.aeTitle), false);
    if (apply(next))
        setStatus(tr("This workstation is %1 on port %2.").arg(next.workstation.aeTitle).arg(next.workstation.storagePort), true);
}

QString StoresDialog::status() const
{
    return m_status->text();
}

void StoresDialog::setStatus(const QString &text, bool ok)
{
    m_status->setText(ok ? text : tr("⚠ %1").arg(text));
}

void StoresDialog::refreshList()
{
    const QSignalBlocker block(m_list);
    m_list->clear();
    for (const StoreConfig &s : m_config.stores())
        m_list->addItem(QStringLiteral("%1  —  %2").arg(s.name, s.summary()));
    // The store being edited stays the current one: a list left without one gets the first store made current
    // (when it has the focus), and the form would jump to it — after every save, the file's change comes back here.
    for (int i = 0; i < m_list->count(); ++i)
        if (m_list->item(i)->text().section(QLatin1Char(' '), 0, 0) == m_editing)
            m_list->setCurrentRow(i);
}

void StoresDialog::updateFields()
{
    // A store's secret is kept only while it stays of its kind: another kind starts from its own defaults.
    const StoreConfig *editing = m_config.find(m_editing);
    const QList<const Secret *> kept = editing && editing->kind() == kindInForm() ? editing->secrets() : QList<const Secret *>();
    m_secret->setPlaceholderText(std::any_of(kept.begin(), kept.end(), [](const Secret *secret) { return secret->isSet(); })
                                     ? tr("(kept; type to replace)") : QString());
    // Only the fields of the chosen kind are on show, as the kind says (archivekind.h).
    const QList<StoreField> fields = archiveKind(kindInForm()).fields();
    auto has = [&](StoreField f) { return fields.contains(f); };
    if (kindInForm() != m_authChoicesFor)
        fillAuthChoices(kindInForm());
    const QString auth = has(StoreField::Auth) ? m_auth->currentData().toString() : QStringLiteral("bearer");
    auto show = [this](QWidget *field, bool on) {
        field->setEnabled(on);
        m_form->setRowVisible(field, on);
    };
    const std::pair<QWidget *, StoreField> rows[] = {
        {m_url, StoreField::Url},           {m_mirrors, StoreField::Mirrors}, {m_auth, StoreField::Auth},
        {m_bucket, StoreField::Bucket},     {m_prefix, StoreField::Prefix},   {m_region, StoreField::Region},
        {m_virtualHost, StoreField::Addressing}, {m_host, StoreField::Host},
        {m_port, StoreField::Port},         {m_aeTitle, StoreField::AeTitle}, {m_ourAeTitle, StoreField::OurAeTitle},
        {m_retrieve, StoreField::Retrieve}, {m_tls, StoreField::Tls},         {m_parallel, StoreField::MaxParallel}};
    for (const auto &[widget, field] : rows)
        show(widget, has(field));
    show(m_user, has(StoreField::User) && auth == QLatin1String("basic"));
    const bool signIn = auth == QLatin1String("oidc");
    for (QWidget *w : {static_cast<QWidget *>(m_issuer), static_cast<QWidget *>(m_clientId), static_cast<QWidget *>(m_audience)})
        show(w, has(StoreField::Issuer) && signIn);
    show(m_stsUrl, has(StoreField::StsUrl) && signIn);
    show(m_roleArn, has(StoreField::RoleArn) && signIn);
    show(m_accessKey, has(StoreField::AccessKey) && !signIn);
    // One secret field: a password or token (as the authentication asks), or the S3 secret key; none for a sign-in.
    show(m_secret, !signIn && ((has(StoreField::Auth) && auth != QLatin1String("none")) || (!has(StoreField::Auth) && has(StoreField::Token))
                               || has(StoreField::SecretKey)));
    // The CA applies where the connection is TLS: HTTPS and blobs:// URLs, or DICOM TLS.
    const QString url = m_url->text().trimmed();
    show(m_caFile, has(StoreField::CaFile)
                       && (has(StoreField::Tls) ? m_tls->isChecked()
                                                : url.isEmpty() || url.startsWith(QLatin1String("https:")) || url.startsWith(QLatin1String("blobs:"))));
    // Laid out again at once: a row hidden after the form's first layout otherwise kept its place until the next
    // resize (Qt 6.4), a blank band between the fields.
    m_form->invalidate();
    if (layout())
        layout()->activate();
}

void StoresDialog::fillAuthChoices(StoreKind kind)
{
    // Each kind's own ways: a DICOMweb server's HTTP authentication, an S3 store's keys; a sign-in for both.
    const QString was = m_auth->currentData().toString();
    const QSignalBlocker block(m_auth);
    m_auth->clear();
    if (kind == StoreKind::S3) {
        m_auth->addItem(tr("Access key and secret key"), QStringLiteral("keys"));
    } else {
        m_auth->addItem(tr("none"), QStringLiteral("none"));
        m_auth->addItem(tr("HTTP Basic (user, password)"), QStringLiteral("basic"));
        m_auth->addItem(tr("Bearer token"), QStringLiteral("bearer"));
    }
    m_auth->addItem(tr("Sign-in (OpenID Connect)"), QStringLiteral("oidc"));
    m_auth->setCurrentIndex(std::max(0, m_auth->findData(was)));
    m_authChoicesFor = kind;
}

void StoresDialog::newStore()
{
    m_filling = true;
    m_editing.clear();
    m_list->clearSelection();
    m_name->clear();
    m_name->setEnabled(true);
    clearFields();
    m_kind->setCurrentIndex(0);
    updateFields();
    m_filling = false;
    m_dirty = false;
}

void StoresDialog::clearFields()
{
    m_url->clear();
    m_mirrors->clear();
    m_user->clear();
    m_secret->clear();
    m_secret->setPlaceholderText(QString());
    m_host->clear();
    m_port->setValue(104);
    m_aeTitle->clear();
    m_ourAeTitle->clear();
    m_retrieve->setCurrentIndex(0);
    m_tls->setChecked(false);
    m_caFile->clear();
    m_bucket->clear();
    m_prefix->clear();
    m_region->setText(QStringLiteral("us-east-1"));
    m_accessKey->clear();
    for (QLineEdit *e : {m_issuer, m_clientId, m_audience, m_stsUrl, m_roleArn})
        e->clear();
    m_virtualHost->setChecked(false);
    m_auth->setCurrentIndex(0);
    m_parallel->setValue(6);
    m_timeout->setValue(30);
}

void StoresDialog::showStore(const QString &name)
{
    const StoreConfig *s = m_config.find(name);
    if (!s)
        return;
    m_filling = true;
    clearFields();  // every field at its default, then the store's kind's fields as they are
    m_editing = s->name;
    m_name->setText(s->name);
    m_kind->setCurrentIndex(m_kind->findData(int(s->kind())));
    const ArchiveKind &kind = archiveKind(s->kind());
    for (const auto &[widget, field] : fieldWidgets())
        if (const QVariant value = kind.value(*s, field); value.isValid())
            setFieldValue(widget, value);
    m_secret->clear();  // a stored secret is never shown: left empty, it stays as it is (updateFields says so)
    updateFields();
    m_filling = false;
    m_dirty = false;
}

QList<std::pair<QWidget *, StoreField>> StoresDialog::fieldWidgets() const
{
    return {{m_url, StoreField::Url},         {m_mirrors, StoreField::Mirrors},       {m_auth, StoreField::Auth},
            {m_user, StoreField::User},       {m_bucket, StoreField::Bucket},         {m_prefix, StoreField::Prefix},
            {m_region, StoreField::Region},   {m_virtualHost, StoreField::Addressing}, {m_accessKey, StoreField::AccessKey},
            {m_host, StoreField::Host},       {m_port, StoreField::Port},             {m_aeTitle, StoreField::AeTitle},
            {m_ourAeTitle, StoreField::OurAeTitle}, {m_retrieve, StoreField::Retrieve}, {m_tls, StoreField::Tls},
            {m_caFile, StoreField::CaFile},   {m_parallel, StoreField::MaxParallel},  {m_timeout, StoreField::Timeout},
            {m_issuer, StoreField::Issuer},   {m_clientId, StoreField::ClientId},     {m_audience, StoreField::Audience},
            {m_stsUrl, StoreField::StsUrl},   {m_roleArn, StoreField::RoleArn}};
}

void StoresDialog::setFieldValue(QWidget *widget, const QVariant &value)
{
    if (auto *line = qobject_cast<QLineEdit *>(widget))
        line->setText(value.typeId() == QMetaType::QStringList ? value.toStringList().join(QLatin1Char(' ')) : value.toString());
    else if (auto *spin = qobject_cast<QSpinBox *>(widget))
        spin->setValue(std::max(spin->minimum(), value.toInt()));
    else if (auto *check = qobject_cast<QCheckBox *>(widget))
        check->setChecked(value.toBool());
    else if (auto *combo = qobject_cast<QComboBox *>(widget))
        combo->setCurrentIndex(std::max(0, combo->findData(value.toString())));
}

QVariant StoresDialog::fieldValue(QWidget *widget, StoreField field)
{
    if (auto *line = qobject_cast<QLineEdit *>(widget)) {
        if (field == StoreField::Mirrors)
            return line->text().split(QRegularExpression(QStringLiteral("[\\s,]+")), Qt::SkipEmptyParts);
        return line->text().trimmed();
    }
    if (auto *spin = qobject_cast<QSpinBox *>(widget))
        return spin->value();
    if (auto *check = qobject_cast<QCheckBox *>(widget))
        return check->isChecked();
    if (auto *combo = qobject_cast<QComboBox *>(widget))
        return combo->currentData().toString();
    return QVariant();
}

StoreKind StoresDialog::kindInForm() const
{
    // A store of a kind the list does not offer (the workstation's cache, a folder archive: `local`) keeps its own.
    if (m_kind->currentIndex() < 0)
        if (const StoreConfig *s = m_config.find(m_editing))
            return s->kind();
    return StoreKind(m_kind->currentData().toInt());
}

Result<StoreConfig> StoresDialog::formStore() const
{
    const StoreKind kindNow = kindInForm();
    const ArchiveKind &kind = archiveKind(kindNow);
    const QString name = m_name->text().trimmed();
    // A store of another kind starts from that kind's defaults: nothing typed for the kind shown before is kept.
    const StoreConfig fresh(name, kind.defaults());
    StoreConfig s = fresh;
    if (const StoreConfig *old = m_config.find(m_editing.isEmpty() ? name : m_editing); old && old->kind() == kindNow)
        s = *old;  // keeps what the form does not show (sealed secrets)
    s.name = name;
    // Each of the kind's fields from its row; a row the form hides (the user without basic authentication, the CA
    // without TLS) leaves the field at its default, a hidden limit as it was.
    for (const auto &[widget, field] : fieldWidgets()) {
        if (widget->isEnabled())
            kind.setValue(s, field, fieldValue(widget, field));
        else if (field != StoreField::MaxParallel && field != StoreField::Timeout)
            kind.setValue(s, field, kind.value(fresh, field));
    }
    const QString typed = m_secret->text();
    if (!typed.isEmpty() && m_config.path().isEmpty())
        return Error(ErrorCode::InvalidArgument, tr("this workstation has no configuration file to keep a sealed secret beside"));
    const QList<StoreField> fields = kind.fields();
    const QString auth = kind.value(s, StoreField::Auth).toString();
    if (!typed.isEmpty() && auth != QLatin1String("oidc")) {
        Result<Secret> sealed = m_config.seal(typed);
        if (!sealed.isOk())
            return sealed.error();
        // One secret row: the S3 secret key, the password of basic authentication, else the token.
        const StoreField which = fields.contains(StoreField::SecretKey) ? StoreField::SecretKey
                                 : auth == QLatin1String("basic")       ? StoreField::Password
                                                                        : StoreField::Token;
        kind.setValue(s, StoreField::Password, QVariant::fromValue(Secret()));
        kind.setValue(s, StoreField::Token, QVariant::fromValue(Secret()));
        kind.setValue(s, which, QVariant::fromValue(sealed.value()));
    }
    if (auth == QLatin1String("none") || auth == QLatin1String("oidc")) {  // a sign-in keeps no password, token or key
        kind.setValue(s, StoreField::Password, QVariant::fromValue(Secret()));
        kind.setValue(s, StoreField::Token, QVariant::fromValue(Secret()));
        kind.setValue(s, StoreField::SecretKey, QVariant::fromValue(Secret()));
    }
    if (Error e = s.validate(); e.isError())
        return e;
    return s;
}

void StoresDialog::saveStore()
{
    Result<StoreConfig> s = formStore();
    if (!s.isOk())
        return setStatus(s.error().message(), false);
    // A new store never replaces one of the same name; an edited one never takes another's.
    const QString name = s.value().name;
    if (name != m_editing && m_config.find(name))
        return setStatus(tr("A store named %1 exists already: choose it in the list to change it, or give this one another name.").arg(name), false);
    StoreConfigFile next = m_config;
    if (!m_editing.isEmpty())
        next.remove(m_editing);  // renamed, or saved over itself
    if (Error e = next.add(s.value()); e.isError())
        return setStatus(e.message(), false);
    if (apply(next)) {
        m_editing = name;
        m_dirty = false;
        setStatus(tr("%1 saved.").arg(name), true);
    }
}

void StoresDialog::removeStore()
{
    const QString name = m_editing.isEmpty() ? m_name->text().trimmed() : m_editing;
    StoreConfigFile next = m_config;
    if (Error e = next.remove(name); e.isError())
        return setStatus(e.message(), false);
    if (!apply(next))
        return;
    newStore();
    setStatus(tr("%1 removed.").arg(name), true);
}

bool StoresDialog::apply(const StoreConfigFile &next)
{
    if (!next.path().isEmpty()) {
        if (Error e = next.save(); e.isError()) {
            setStatus(e.message(), false);
            return false;
        }
    }
    m_config = next;
    m_workstation->setStoreConfig(m_config);
    m_secret->clear();
    refreshList();
    return true;
}

void StoresDialog::testStore()
{
    Result<StoreConfig> s = formStore();
    if (!s.isOk()) {
        setStatus(s.error().message(), false);
        return Q_EMIT tested(false, s.error().message());
    }
    // The store as typed, in a registry of its own (nothing saved yet).
    StoreConfigFile trial = m_config;
    trial.remove(s.value().name);
    if (Error e = trial.add(s.value()); e.isError()) {
        setStatus(e.message(), false);
        return Q_EMIT tested(false, e.message());
    }
    auto *registry = new StoreRegistry(trial, nullptr, this);
    setStatus(tr("Testing %1…").arg(s.value().name), true);
    const QString name = s.value().name;
    whenDone(registry->test(name), this, [this, registry, name](const Result<Done> &r) {
        registry->deleteLater();
        QString message = r.isOk() ? tr("%1: connection OK").arg(name) : tr("%1: %2").arg(name, r.error().toString());
        if (!r.isOk() && r.error().message().contains(QStringLiteral("404")))
            message += tr(" — is the URL the DICOMweb root? For Orthanc it is http://HOST:8042/dicom-web, without /studies.");
        setStatus(message, r.isOk());
        Q_EMIT tested(r.isOk(), message);
    });
}

} // namespace spectrum

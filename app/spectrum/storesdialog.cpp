#include "storesdialog.h"

#include "workstation.h"

#include "spectrum/stores/storeregistry.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace spectrum {

StoresDialog::StoresDialog(Workstation *workstation, QWidget *parent)
    : QDialog(parent), m_workstation(workstation), m_config(workstation->storeConfig()), m_list(new QListWidget), m_name(new QLineEdit),
      m_kind(new QComboBox), m_url(new QLineEdit), m_auth(new QComboBox), m_user(new QLineEdit), m_secret(new QLineEdit),
      m_host(new QLineEdit), m_port(new QSpinBox), m_aeTitle(new QLineEdit), m_ourAeTitle(new QLineEdit), m_retrieve(new QComboBox),
      m_tls(new QCheckBox(tr("DICOM TLS"))),
      m_caFile(new QLineEdit), m_parallel(new QSpinBox), m_status(new QLabel)
{
    setWindowTitle(tr("Stores"));
    resize(820, 480);
    for (StoreKind k : {StoreKind::DicomWeb, StoreKind::Dimse, StoreKind::Blobd})
        m_kind->addItem(storeKindName(k), int(k));
    m_auth->addItem(tr("none"), QStringLiteral("none"));
    m_auth->addItem(tr("HTTP Basic (user, password)"), QStringLiteral("basic"));
    m_auth->addItem(tr("Bearer token"), QStringLiteral("bearer"));
    m_secret->setEchoMode(QLineEdit::Password);
    m_port->setRange(0, 65535);
    m_parallel->setRange(1, 64);
    m_parallel->setValue(6);
    m_retrieve->addItem(tr("C-GET"), QStringLiteral("get"));
    m_retrieve->addItem(tr("C-MOVE to this workstation"), QStringLiteral("move"));
    m_url->setPlaceholderText(tr("https://pacs.example.org/dicom-web   or   blob://host:port"));
    m_tls->setToolTip(tr("Associations over TLS (BCP 195): the PACS must show a certificate from the trusted CA naming its host; "
                         "this workstation's certificate (workstation.tls) goes to a PACS that asks for one"));
    m_caFile->setPlaceholderText(tr("the system's CAs"));
    m_caFile->setToolTip(tr("A PEM file with the hospital's CA: the archive's certificate must come from it (HTTPS, blobs://, DICOM TLS)"));
    m_status->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("storesStatus"));

    auto *form = new QFormLayout;
    form->addRow(tr("Name"), m_name);
    form->addRow(tr("Kind"), m_kind);
    form->addRow(tr("URL"), m_url);
    form->addRow(tr("Authentication"), m_auth);
    form->addRow(tr("User"), m_user);
    form->addRow(tr("Password / token"), m_secret);
    form->addRow(tr("Host"), m_host);
    form->addRow(tr("Port"), m_port);
    form->addRow(tr("Its AE title"), m_aeTitle);
    form->addRow(tr("Our AE title"), m_ourAeTitle);
    form->addRow(tr("Retrieve by"), m_retrieve);
    form->addRow(tr("Security"), m_tls);
    form->addRow(tr("Trusted CA file"), m_caFile);
    form->addRow(tr("At once"), m_parallel);

    auto *add = new QPushButton(tr("New"));
    auto *save = new QPushButton(tr("Save"));
    auto *remove = new QPushButton(tr("Remove"));
    auto *test = new QPushButton(tr("Test connection"));
    connect(add, &QPushButton::clicked, this, &StoresDialog::newStore);
    connect(save, &QPushButton::clicked, this, &StoresDialog::saveStore);
    connect(remove, &QPushButton::clicked, this, &StoresDialog::removeStore);
    connect(test, &QPushButton::clicked, this, &StoresDialog::testStore);
    auto *buttons = new QHBoxLayout;
    for (QPushButton *b : {add, save, remove, test})
        buttons->addWidget(b);
    buttons->addStretch();
    auto *close = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *right = new QVBoxLayout;
    right->addLayout(form);
    right->addLayout(buttons);
    right->addWidget(m_status);
    right->addStretch();
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
    connect(m_list, &QListWidget::currentTextChanged, this, [this](const QString &text) { showStore(text.section(QLatin1Char(' '), 0, 0)); });
    refreshList();
    newStore();
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
}

void StoresDialog::updateFields()
{
    const auto kind = StoreKind(m_kind->currentData().toInt());
    const bool web = kind == StoreKind::DicomWeb, dimse = kind == StoreKind::Dimse, blobd = kind == StoreKind::Blobd;
    m_url->setEnabled(web || blobd);
    m_auth->setEnabled(web);
    const QString auth = web ? m_auth->currentData().toString() : QStringLiteral("bearer");
    m_user->setEnabled(web && auth == QLatin1String("basic"));
    m_secret->setEnabled((web && auth != QLatin1String("none")) || blobd);
    for (QWidget *w : std::initializer_list<QWidget *>{m_host, m_port, m_aeTitle, m_ourAeTitle, m_retrieve, m_tls})
        w->setEnabled(dimse);
    // The CA applies where the connection is TLS: HTTPS and blobs:// URLs, or DICOM TLS.
    const QString url = m_url->text().trimmed();
    m_caFile->setEnabled((dimse && m_tls->isChecked()) || (!dimse && (url.isEmpty() || url.startsWith(QLatin1String("https:")) || url.startsWith(QLatin1String("blobs:")))));
}

void StoresDialog::newStore()
{
    m_list->clearSelection();
    m_name->clear();
    m_name->setEnabled(true);
    m_url->clear();
    m_user->clear();
    m_secret->clear();
    m_secret->setPlaceholderText(QString());
    m_host->clear();
    m_port->setValue(104);
    m_aeTitle->clear();
    m_ourAeTitle->clear();
    m_tls->setChecked(false);
    m_caFile->clear();
    m_kind->setCurrentIndex(0);
    m_auth->setCurrentIndex(0);
    updateFields();
}

void StoresDialog::showStore(const QString &name)
{
    const StoreConfig *s = m_config.find(name);
    if (!s)
        return;
    m_name->setText(s->name);
    m_kind->setCurrentIndex(m_kind->findData(int(s->kind)));
    m_url->setText(s->url);
    m_auth->setCurrentIndex(std::max(0, m_auth->findData(s->auth)));
    m_user->setText(s->user);
    m_secret->clear();
    // A stored secret is never shown: left empty, it stays as it is.
    m_secret->setPlaceholderText(s->password.isSet() || s->token.isSet() ? tr("(kept; type to replace)") : QString());
    m_host->setText(s->host);
    m_port->setValue(s->port);
    m_aeTitle->setText(s->aeTitle);
    m_ourAeTitle->setText(s->ourAeTitle);
    m_retrieve->setCurrentIndex(std::max(0, m_retrieve->findData(s->retrieve)));
    m_tls->setChecked(s->tls);
    m_caFile->setText(s->caFile);
    m_parallel->setValue(s->maxParallel);
    updateFields();
}

Result<StoreConfig> StoresDialog::formStore() const
{
    StoreConfig s;
    if (const StoreConfig *old = m_config.find(m_name->text().trimmed()))
        s = *old;  // keeps what the form does not show (sealed secrets, timeouts)
    s.name = m_name->text().trimmed();
    s.kind = StoreKind(m_kind->currentData().toInt());
    s.url = m_url->text().trimmed();
    s.auth = s.kind == StoreKind::DicomWeb ? m_auth->currentData().toString() : QStringLiteral("none");
    s.user = s.auth == QLatin1String("basic") ? m_user->text().trimmed() : QString();
    s.host = m_host->text().trimmed();
    s.port = m_port->value();
    s.aeTitle = m_aeTitle->text().trimmed();
    s.ourAeTitle = m_ourAeTitle->text().trimmed();
    s.retrieve = m_retrieve->currentData().toString();
    s.tls = s.kind == StoreKind::Dimse && m_tls->isChecked();
    s.caFile = m_caFile->isEnabled() ? m_caFile->text().trimmed() : QString();
    s.maxParallel = m_parallel->value();
    if (s.kind != StoreKind::Dimse) {
        s.host.clear();
        s.port = 0;
        s.aeTitle.clear();
        s.ourAeTitle.clear();
    } else {
        s.url.clear();
    }
    const QString typed = m_secret->text();
    if (!typed.isEmpty() && m_config.path().isEmpty())
        return Error(ErrorCode::InvalidArgument, tr("this workstation has no configuration file to keep a sealed secret beside"));
    if (!typed.isEmpty()) {
        Result<Secret> sealed = m_config.seal(typed);
        if (!sealed.isOk())
            return sealed.error();
        if (s.auth == QLatin1String("basic")) {
            s.password = sealed.value();
            s.token = Secret();
        } else {
            s.token = sealed.value();
            s.password = Secret();
        }
    }
    if (s.auth == QLatin1String("none") && s.kind == StoreKind::DicomWeb) {
        s.password = Secret();
        s.token = Secret();
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
    StoreConfigFile next = m_config;
    next.remove(s.value().name);
    if (Error e = next.add(s.value()); e.isError())
        return setStatus(e.message(), false);
    if (apply(next))
        setStatus(tr("%1 saved.").arg(s.value().name), true);
}

void StoresDialog::removeStore()
{
    const QString name = m_name->text().trimmed();
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
        const QString message = r.isOk() ? tr("%1: connection OK").arg(name) : tr("%1: %2").arg(name, r.error().toString());
        setStatus(message, r.isOk());
        Q_EMIT tested(r.isOk(), message);
    });
}

} // namespace spectrum

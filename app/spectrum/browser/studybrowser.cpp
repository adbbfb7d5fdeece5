// SPDX-License-Identifier: Apache-2.0
#include "browser/studybrowser.h"

#include <QKeyEvent>

#include "shell/workstation.h"

#include "spectrum/stores/archives/storeregistry.h"

#include <QBrush>
#include <QComboBox>
#include <QDateEdit>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace spectrum {

namespace {

QString studyKey(const QString &uid, const QString &patientId)
{
    return uid + QLatin1Char('|') + patientId;
}

} // namespace

// ---- FoundStudyModel ----

FoundStudyModel::FoundStudyModel(QObject *parent) : QAbstractTableModel(parent)
{
    qRegisterMetaType<spectrum::FoundStudy>();
}

void FoundStudyModel::setLocal(const QList<StudySummary> &studies)
{
    m_local = studies;
    rebuild();
}

void FoundStudyModel::addFromStore(const QString &store, const QList<DicomRecord> &studies)
{
    m_remote.append({store, studies});
    rebuild();
}

void FoundStudyModel::clearStores()
{
    m_remote.clear();
    rebuild();
}

const FoundStudy *FoundStudyModel::at(int row) const
{
    return row >= 0 && row < m_rows.size() ? &m_rows[row] : nullptr;
}

void FoundStudyModel::rebuild()
{
    QList<FoundStudy> rows;
    QHash<QString, int> byKey;
    QHash<QString, QSet<QString>> patientsOfUid;
    auto rowFor = [&](const DicomIdentity &id) -> FoundStudy & {
        const QString key = studyKey(id.studyInstanceUid, id.patientId);
        patientsOfUid[id.studyInstanceUid].insert(id.patientId);
        if (!byKey.contains(key)) {
            FoundStudy f;
            f.identity = id;
            byKey.insert(key, int(rows.size()));
            rows << f;
        }
        return rows[byKey.value(key)];
    };
    for (const StudySummary &s : m_local) {
        FoundStudy &f = rowFor(s.identity);
        f.modalities = s.modalities;
        f.description = s.identity.studyDescription;
        f.cachedInstances = s.instanceCount;
        f.instances = std::max(f.instances, s.instanceCount);
        f.identityConflict = f.identityConflict || s.identityConflict;
    }
    for (const auto &[store, records] : m_remote) {
        for (const DicomRecord &r : records) {
            FoundStudy &f = rowFor(r.identity);
            if (!f.stores.contains(store))
                f.stores << store;
            for (const QString &m : r.modalitiesInStudy) {
                if (!f.modalities.contains(m))
                    f.modalities << m;
            }
            if (f.description.isEmpty())
                f.description = r.identity.studyDescription;
            for (auto field : {&DicomIdentity::patientName, &DicomIdentity::studyDate, &DicomIdentity::accessionNumber,
                               &DicomIdentity::patientBirthDate, &DicomIdentity::patientSex}) {
                if ((f.identity.*field).isEmpty())
                    f.identity.*field = r.identity.*field;
            }
            f.instances = std::max(f.instances, r.relatedInstances);
        }
    }
    for (FoundStudy &f : rows) {
        if (patientsOfUid.value(f.identity.studyInstanceUid).size() > 1)
            f.identityConflict = true;  // one Study Instance UID, two patients: shown apart, flagged
    }
    beginResetModel();
    m_rows = rows;
    endResetModel();
}

int FoundStudyModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int FoundStudyModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FoundStudyModel::data(const QModelIndex &index, int role) const
{
    const FoundStudy *f = at(index.row());
    if (!f)
        return QVariant();
    if (role == StudyUidRole)
        return f->identity.studyInstanceUid;
    if (role == PatientIdRole)
        return f->identity.patientId;
    if (role == Qt::ForegroundRole && f->identityConflict)
        return QBrush(QColor(255, 120, 90));
    if (role == Qt::ToolTipRole && f->identityConflict)
        return tr("The same Study Instance UID belongs to another patient elsewhere. The studies are listed apart; check before reading.");
    if (role == Qt::TextAlignmentRole && (index.column() == Images || index.column() == Cached))
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == SortRole) {
        switch (index.column()) {
        case Images: return f->instances;
        case Cached: return f->instances > 0 ? double(f->cachedInstances) / f->instances : 0.0;
        case Date: return f->identity.studyDate + f->identity.studyTime;
        default: break;
        }
        role = Qt::DisplayRole;
    }
    if (role != Qt::DisplayRole)
        return QVariant();
    switch (index.column()) {
    case Patient:
        return DicomIdentity::displayName(f->identity.patientName) + (f->identityConflict ? tr("  ⚠ identity conflict") : QString());
    case PatientId: return f->identity.patientId;
    case Date: return DicomIdentity::displayDate(f->identity.studyDate);
    case Modality: return f->modalities.join(QLatin1Char('/'));
    case Description: return f->description;
    case Images: return f->instances >= 0 ? QVariant(f->instances) : QVariant(QStringLiteral("?"));
    case Where: {
        QStringList where;
        if (f->cachedInstances > 0)
            where << tr("this workstation");
        where << f->stores;
        return where.join(QStringLiteral(", "));
    }
    case Cached:
        if (f->cachedInstances == 0)
            return tr("—");
        if (f->isCached())
            return tr("all");
        return tr("%1 of %2").arg(f->cachedInstances).arg(f->instances);
    }
    return QVariant();
}

QVariant FoundStudyModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QVariant();
    switch (section) {
    case Patient: return tr("Patient");
    case PatientId: return tr("Patient ID");
    case Date: return tr("Study date");
    case Modality: return tr("Modality");
    case Description: return tr("Description");
    case Images: return tr("Images");
    case Where: return tr("Where");
    case Cached: return tr("Cached");
    }
    return QVariant();
}

// ---- StudyBrowser ----

StudyBrowser::StudyBrowser(Workstation *workstation, QWidget *parent)
    : QWidget(parent), m_workstation(workstation), m_name(new QLineEdit), m_id(new QLineEdit), m_accession(new QLineEdit),
      m_modality(new QComboBox), m_dates(new QComboBox), m_from(new QDateEdit), m_to(new QDateEdit), m_table(new QTableView),
      m_model(new FoundStudyModel(this)), m_sorted(new QSortFilterProxyModel(this)), m_status(new QLabel), m_savedButton(new QToolButton)
{
    m_name->setPlaceholderText(tr("Patient name (doe, doe john, DOE*…)"));
    m_name->setToolTip(tr("Any part of the name from its start — family or given name, any case, with or without accents; * and ? as wildcards"));
    m_id->setPlaceholderText(tr("Patient ID"));
    m_accession->setPlaceholderText(tr("Accession"));
    m_name->setObjectName(QStringLiteral("patientName"));
    m_id->setObjectName(QStringLiteral("patientId"));
    m_accession->setObjectName(QStringLiteral("accession"));
    m_modality->addItem(tr("Any modality"), QString());
    for (const char *m : {"CT", "MR", "CR", "DX", "US", "MG", "PT", "NM", "XA", "RF", "OT"})
        m_modality->addItem(QString::fromLatin1(m), QString::fromLatin1(m));
    m_dates->addItem(tr("Any date"));
    m_dates->addItem(tr("Today"));
    m_dates->addItem(tr("Yesterday"));
    m_dates->addItem(tr("Last 7 days"));
    m_dates->addItem(tr("Last 30 days"));
    m_dates->addItem(tr("From … to …"));
    for (QDateEdit *d : {m_from, m_to}) {
        d->setCalendarPopup(true);
        d->setDisplayFormat(QStringLiteral("yyyy-MM-dd"));
        d->setDate(QDate::currentDate());
        d->setEnabled(false);
    }
    connect(m_dates, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_from->setEnabled(i == 5);
        m_to->setEnabled(i == 5);
    });
    auto *prefetch = new QPushButton(tr("Prefetch"));
    prefetch->setToolTip(tr("Fetch the selected studies into the cache now, to read them later"));
    connect(prefetch, &QPushButton::clicked, this, &StudyBrowser::prefetchSelected);
    auto *go = new QPushButton(tr("Search"));
    go->setDefault(true);
    go->setToolTip(tr("Search this workstation and every configured store (Enter)"));
    for (QLineEdit *e : {m_name, m_id, m_accession}) {
        e->setClearButtonEnabled(true);
        connect(e, &QLineEdit::returnPressed, this, &StudyBrowser::search);
        e->installEventFilter(this);  // ↓ into the results
    }
    connect(go, &QPushButton::clicked, this, &StudyBrowser::search);

    m_sorted->setSourceModel(m_model);
    m_sorted->setSortRole(FoundStudyModel::SortRole);
    m_table->setModel(m_sorted);
    m_table->setObjectName(QStringLiteral("studyTable"));
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);  // several, to prefetch
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(FoundStudyModel::Date, Qt::DescendingOrder);
    m_table->verticalHeader()->hide();
    m_table->setAlternatingRowColors(true);
    m_table->setShowGrid(false);
    m_table->horizontalHeader()->setSectionResizeMode(FoundStudyModel::Description, QHeaderView::Stretch);
    m_table->setColumnWidth(FoundStudyModel::Patient, 240);
    m_table->setColumnWidth(FoundStudyModel::PatientId, 140);
    m_table->setColumnWidth(FoundStudyModel::Date, 110);
    m_table->setColumnWidth(FoundStudyModel::Modality, 90);
    m_table->setColumnWidth(FoundStudyModel::Where, 200);
    // Enter, and a double-click (or a single click where the platform activates so): one open each — a double-click
    // also emits doubleClicked, which would ask for the study twice.
    connect(m_table, &QTableView::activated, this, &StudyBrowser::openCurrent);

    m_savedButton->setText(tr("Saved"));
    m_savedButton->setObjectName(QStringLiteral("savedSearches"));
    m_savedButton->setToolTip(tr("Run a saved search, or save this one (it can prefetch what it lists, and run by itself)"));
    m_savedButton->setPopupMode(QToolButton::InstantPopup);
    m_savedButton->setMenu(new QMenu(m_savedButton));
    connect(m_savedButton->menu(), &QMenu::aboutToShow, this, &StudyBrowser::fillSavedMenu);
    // What the reader changes in the form is no longer the saved search.
    for (QLineEdit *e : {m_name, m_id, m_accession})
        connect(e, &QLineEdit::textEdited, this, &StudyBrowser::leaveSaved);
    for (QComboBox *c : {m_modality, m_dates})
        connect(c, &QComboBox::activated, this, &StudyBrowser::leaveSaved);
    for (QDateEdit *d : {m_from, m_to})
        connect(d, &QDateEdit::editingFinished, this, &StudyBrowser::leaveSaved);

    auto *form = new QHBoxLayout;
    form->addWidget(m_savedButton);
    form->addWidget(m_name, 3);
    form->addWidget(m_id, 2);
    form->addWidget(m_accession, 2);
    form->addWidget(m_modality, 1);
    form->addWidget(m_dates, 1);
    form->addWidget(m_from);
    form->addWidget(m_to);
    form->addWidget(go);
    form->addWidget(prefetch);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_status);
    m_status->setObjectName(QStringLiteral("searchStatus"));

    connect(m_workstation, &Workstation::studiesChanged, this, &StudyBrowser::refreshLocal);
    refreshLocal();
}

DicomQuery StudyBrowser::query() const
{
    if (m_active)
        return m_active->query();
    DicomQuery q;
    q.patientName = m_name->text().trimmed();
    q.patientId = m_id->text().trimmed();
    q.accessionNumber = m_accession->text().trimmed();
    q.modality = m_modality->currentData().toString();
    const QDate today = QDate::currentDate();
    switch (m_dates->currentIndex()) {
    case 1: q.dateFrom = q.dateTo = today; break;
    case 2: q.dateFrom = q.dateTo = today.addDays(-1); break;
    case 3: q.dateFrom = today.addDays(-6); q.dateTo = today; break;
    case 4: q.dateFrom = today.addDays(-29); q.dateTo = today; break;
    case 5: q.dateFrom = m_from->date(); q.dateTo = m_to->date(); break;
    default: break;
    }
    return q;
}

const FoundStudy *StudyBrowser::studyAtRow(int row) const
{
    return m_model->at(m_sorted->mapToSource(m_sorted->index(row, 0)).row());
}

void StudyBrowser::refreshLocal()
{
    // The name as the reader typed it (nameMatchesTyped); the rest by DICOM's rules.
    DicomQuery q = query();
    const QString typed = std::exchange(q.patientName, QString());
    QList<StudySummary> matching;
    for (const StudySummary &s : m_workstation->studies()) {
        if (q.matchesStudy(s.identity, s.modalities) && DicomQuery::nameMatchesTyped(typed, s.identity.patientName))
            matching << s;
    }
    m_model->setLocal(matching);
    if (m_table->selectionModel()->selectedRows().isEmpty() && m_sorted->rowCount() > 0)
        m_table->selectRow(0);
}

bool StudyBrowser::eventFilter(QObject *watched, QEvent *event)
{
    // ↓ in a search field: on to the results (the first selected), where Enter opens.
    if (event->type() == QEvent::KeyPress && static_cast<QKeyEvent *>(event)->key() == Qt::Key_Down
        && (watched == m_name || watched == m_id || watched == m_accession) && m_sorted->rowCount() > 0) {
        if (m_table->selectionModel()->selectedRows().isEmpty())
            m_table->selectRow(0);
        m_table->setCurrentIndex(m_table->selectionModel()->selectedRows().first());
        m_table->setFocus(Qt::TabFocusReason);
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

void StudyBrowser::search()
{
    DicomQuery q = query();
    // Archives are asked for names holding what was typed, and what they answer is matched here as the cache is.
    const QString typed = q.patientName;
    q.patientName = DicomQuery::nameQueryFor(typed);
    if (Error e = q.validate(); e.isError()) {
        m_status->setText(tr("Cannot search: %1").arg(e.message()));
        return;
    }
    ++m_generation;
    m_model->clearStores();
    refreshLocal();
    m_answers = {tr("this workstation: %n study(ies)", nullptr, m_model->rowCount())};
    if (m_active)
        m_answers.prepend(tr("Saved search “%1”").arg(m_active->name));
    StoreRegistry *registry = m_workstation->registry();
    QStringList remote = archives();
    if (m_active && !m_active->stores.isEmpty()) {
        QStringList missing;
        for (const QString &s : m_active->stores) {
            if (!remote.contains(s))
                missing << s;
        }
        remote = QStringList(m_active->stores);
        for (const QString &s : missing) {
            remote.removeAll(s);
            m_answers << tr("%1: not configured").arg(s);
        }
    }
    m_pending = int(remote.size());
    m_status->setText(remote.isEmpty() ? m_answers.join(QStringLiteral(" · ")) + tr("  (no archive is configured: spectrum-cli stores add …)")
                                       : m_answers.join(QStringLiteral(" · ")) + tr("  · asking %1…").arg(remote.join(QStringLiteral(", "))));
    if (remote.isEmpty())
        return Q_EMIT searchFinished();
    // One job per store: each answer shows as soon as it is in, whatever the slowest store does.
    for (const QString &name : remote) {
        const quint64 generation = m_generation;
        whenDone(registry->findStudies(q, {name}), this, [this, name, generation, typed](const Result<QList<StudyHit>> &r) {
            if (generation != m_generation)
                return;  // an older search
            --m_pending;
            if (r.isOk()) {
                QList<DicomRecord> studies;
                for (const StudyHit &h : r.value())
                    if (DicomQuery::nameMatchesTyped(typed, h.study.identity.patientName))
                        studies << h.study;
                m_model->addFromStore(name, studies);
                m_answers << tr("%1: %n study(ies)", nullptr, int(studies.size())).arg(name);
            } else {
                m_answers << tr("%1: %2").arg(name, r.error().toString());
            }
            m_status->setText(m_answers.join(QStringLiteral(" · ")) + (m_pending > 0 ? tr("  · waiting for %n more…", nullptr, m_pending) : QString()));
            if (m_table->selectionModel()->selectedRows().isEmpty() && m_sorted->rowCount() > 0)
                m_table->selectRow(0);
            if (m_pending == 0) {
                if (m_active && m_active->prefetch != SavedSearch::Prefetch::None)
                    Q_EMIT savedSearchListed(*m_active, hits());
                Q_EMIT searchFinished();
            }
        });
    }
}

void StudyBrowser::prefetchSelected()
{
    QList<FoundStudy> studies;
    for (const QModelIndex &row : m_table->selectionModel()->selectedRows()) {
        if (const FoundStudy *f = studyAtRow(row.row()); f && !f->isCached() && !f->stores.isEmpty())
            studies << *f;
    }
    if (studies.isEmpty()) {
        m_status->setText(tr("Nothing to prefetch: the selected studies are in the cache already, or no archive holds them."));
        return;
    }
    Q_EMIT prefetchRequested(studies);
}

void StudyBrowser::openCurrent()
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return;
    if (const FoundStudy *f = studyAtRow(rows.first().row()))
        Q_EMIT openRequested(*f);
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
// StudyBrowser: its saved searches (the Saved menu), run, saved and deleted.
#include "browser/savesearchdialog.h"
#include "browser/studybrowser.h"
#include "shell/workstation.h"

#include "spectrum/stores/reading/savedsearchrunner.h"

#include <QComboBox>
#include <QDateEdit>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QToolButton>

namespace spectrum {

QStringList StudyBrowser::archives() const
{
    QStringList names;
    if (StoreRegistry *registry = m_workstation->registry()) {
        for (const StoreConfig &s : registry->config().stores()) {
            if (!s.isTheCache())
                names << s.name;
        }
    }
    return names;
}

SavedSearch StudyBrowser::currentSearch() const
{
    if (m_active)
        return *m_active;
    SavedSearch s;
    s.patientName = m_name->text().trimmed();
    s.patientId = m_id->text().trimmed();
    s.accessionNumber = m_accession->text().trimmed();
    s.modality = m_modality->currentData().toString();
    switch (m_dates->currentIndex()) {
    case 1: s.dates.kind = DatePeriod::Today; break;
    case 2: s.dates.kind = DatePeriod::Yesterday; break;
    case 3: s.dates.kind = DatePeriod::LastDays; s.dates.days = 7; break;
    case 4: s.dates.kind = DatePeriod::LastDays; s.dates.days = 30; break;
    case 5:
        s.dates.kind = DatePeriod::Between;
        s.dates.from = m_from->date();
        s.dates.to = m_to->date();
        break;
    default: break;
    }
    return s;
}

QList<StudyHit> StudyBrowser::hits() const
{
    QList<StudyHit> out;
    for (int row = 0; row < m_model->rowCount(); ++row) {
        const FoundStudy *f = m_model->at(row);
        StudyHit h;
        h.study.identity = f->identity;
        h.study.identity.studyDescription = f->description;
        h.study.modalitiesInStudy = f->modalities;
        h.study.relatedInstances = f->instances;
        h.stores = f->stores;
        if (f->identityConflict)
            h.conflicts << tr("its Study Instance UID belongs to another patient elsewhere");
        out << h;
    }
    return out;
}

bool StudyBrowser::runSaved(const QString &name)
{
    const SavedSearch *saved = m_workstation->savedSearchList().find(name);
    if (!saved)
        return false;
    m_active = *saved;
    // The form shows what it asks (the dates as they fall today).
    m_name->setText(saved->patientName);
    m_id->setText(saved->patientId);
    m_accession->setText(saved->accessionNumber);
    int modality = m_modality->findData(saved->modality);
    if (modality < 0) {
        m_modality->addItem(saved->modality, saved->modality);
        modality = m_modality->count() - 1;
    }
    m_modality->setCurrentIndex(modality);
    const DatePeriod &d = saved->dates;
    int dates = 5;
    if (d.kind == DatePeriod::Any)
        dates = 0;
    else if (d.kind == DatePeriod::Today)
        dates = 1;
    else if (d.kind == DatePeriod::Yesterday)
        dates = 2;
    else if (d.kind == DatePeriod::LastDays && (d.days == 7 || d.days == 30))
        dates = d.days == 7 ? 3 : 4;
    m_dates->setCurrentIndex(dates);
    if (dates == 5) {
        const auto [from, to] = d.resolve(QDate::currentDate());
        m_from->setDate(from.isValid() ? from : QDate(1900, 1, 1));
        m_to->setDate(to.isValid() ? to : QDate::currentDate());
    }
    m_savedButton->setText(tr("Saved: %1").arg(name));
    search();
    return true;
}

void StudyBrowser::leaveSaved()
{
    if (!m_active)
        return;
    m_active.reset();
    m_savedButton->setText(tr("Saved"));
}

Error StudyBrowser::saveSearch(const SavedSearch &search)
{
    if (Error e = m_workstation->putSavedSearch(search); e.isError()) {
        m_status->setText(tr("The search was not saved: %1").arg(e.message()));
        return e;
    }
    m_active = search;
    m_savedButton->setText(tr("Saved: %1").arg(search.name));
    m_status->setText(search.everyMinutes > 0 ? tr("Saved “%1”: it runs every %2 minutes while Spectrum runs, and from the Saved menu").arg(search.name).arg(search.everyMinutes)
                                              : tr("Saved “%1”: run it from the Saved menu").arg(search.name));
    return Error();
}

bool StudyBrowser::deleteSaved(const QString &name)
{
    if (Error e = m_workstation->removeSavedSearch(name); e.isError()) {
        m_status->setText(tr("“%1” was not deleted: %2").arg(name, e.message()));
        return false;
    }
    if (m_active && m_active->name == name)
        leaveSaved();
    m_status->setText(tr("Deleted the saved search “%1”").arg(name));
    return true;
}

void StudyBrowser::saveCurrentSearch()
{
    QStringList taken;
    for (const SavedSearch &s : m_workstation->savedSearchList().searches)
        taken << s.name;
    SaveSearchDialog dialog(currentSearch(), archives(), taken, this);
    if (dialog.exec() == QDialog::Accepted)
        saveSearch(dialog.search());
}

void StudyBrowser::fillSavedMenu()
{
    QMenu *menu = m_savedButton->menu();
    menu->clear();
    const SavedSearches &saved = m_workstation->savedSearchList();
    SavedSearchRunner *runner = m_workstation->savedSearches();
    for (const SavedSearch &s : saved.searches) {
        QStringList about;
        if (s.prefetch == SavedSearch::Prefetch::Priors)
            about << tr("prefetches their priors");
        else if (s.prefetch == SavedSearch::Prefetch::StudiesAndPriors)
            about << tr("prefetches them and their priors");
        if (s.everyMinutes > 0) {
            const QDateTime next = runner ? runner->nextRun(s.name) : QDateTime();
            about << (next.isValid() ? tr("every %1 min, next at %2").arg(s.everyMinutes).arg(next.toString(QStringLiteral("HH:mm")))
                                     : tr("every %1 min").arg(s.everyMinutes));
        }
        const QString label = about.isEmpty() ? s.name : QStringLiteral("%1   (%2)").arg(s.name, about.join(QStringLiteral(" · ")));
        const QString name = s.name;
        menu->addAction(label, this, [this, name] { runSaved(name); });
    }
    if (saved.searches.isEmpty())
        menu->addAction(tr("No saved search yet"))->setEnabled(false);
    menu->addSeparator();
    menu->addAction(tr("Save this search…"), this, &StudyBrowser::saveCurrentSearch);
    QMenu *remove = menu->addMenu(tr("Delete"));
    remove->setEnabled(!saved.searches.isEmpty());
    for (const SavedSearch &s : saved.searches) {
        const QString name = s.name;
        remove->addAction(name, this, [this, name] { deleteSaved(name); });
    }
}

} // namespace spectrum

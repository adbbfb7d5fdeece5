// SPDX-License-Identifier: Apache-2.0
// MainWindow and the studies in the local cache: opening one (its instances read off the GUI thread, with its most
// recent comparable prior's, so that the hanging protocol lays both out at once), and the series that reach the
// cache later joining the open study.
#include "shell/mainwindow.h"
#include "viewer/studyviewer.h"

#include "spectrum/stores/reading/priorsearch.h"

#include <QPointer>
#include <QStatusBar>
#include <QTabWidget>

#include <memory>
#include <optional>

namespace spectrum {

StudyViewer *MainWindow::openStudy(const QString &uidOrAlias)
{
    const StudySummary *study = m_workstation->findStudy(uidOrAlias);
    if (!study) {
        statusBar()->showMessage(tr("Study %1 is not in the local cache").arg(uidOrAlias), 6000);
        return nullptr;
    }
    // A Study UID alone does not say whose study it is when the cache holds it under two patients: the reader
    // chooses the row (each patient's is listed apart, flagged).
    if (study->identityConflict) {
        statusBar()->showMessage(tr("Study %1 is in the cache under more than one patient: choose it in the study list (⚠)").arg(uidOrAlias));
        return nullptr;
    }
    return openFromCache(*study);
}

StudyViewer *MainWindow::openFromCache(const StudySummary &study)
{
    const DicomIdentity id = study.identity;
    if (StudyViewer *open = viewerOf(id.studyInstanceUid, id.patientId)) {
        m_tabs->setCurrentWidget(open);
        return open;
    }
    const QString key = id.studyInstanceUid + QLatin1Char('\n') + id.patientId;
    if (m_opening.contains(key))
        return nullptr;  // being read: a second click opens nothing twice
    m_opening.insert(key);
    // The study, and its most recent comparable prior in the cache: its protocol may hang the two side by side.
    QList<StudySummary> wanted{study};
    const PriorList priors = arrangePriors(study, m_workstation->studies(), {});
    if (const int comparable = priors.mostRecentComparable(id); comparable >= 0) {
        const DicomIdentity &p = priors.studies[comparable].identity;
        for (const StudySummary &s : m_workstation->studies()) {
            if (s.identity.studyInstanceUid == p.studyInstanceUid && s.identity.patientId == p.patientId && !s.identityConflict
                && !m_workstation->loadedStudy(p.studyInstanceUid, p.patientId))
                wanted << s;
        }
    }
    statusBar()->showMessage(tr("Opening %1 — %2 …").arg(DicomIdentity::displayName(id.patientName), study.modalities.join(QLatin1Char('/'))));
    auto remaining = std::make_shared<int>(int(wanted.size()));
    auto loaded = std::make_shared<Result<StudySummary>>(Error(ErrorCode::NotFound, tr("not read")));
    for (int i = 0; i < wanted.size(); ++i) {
        const bool theStudy = i == 0;
        whenDone(m_workstation->loadStudy(wanted[i]), this, [this, theStudy, remaining, loaded, key, id](const Result<StudySummary> &r) {
            if (theStudy)
                *loaded = r;
            if (--*remaining > 0)
                return;
            m_opening.remove(key);
            if (!loaded->isOk()) {
                statusBar()->showMessage(tr("Cannot open the study: %1").arg(loaded->error().toString()));
                return;
            }
            if (StudyViewer *open = viewerOf(id.studyInstanceUid, id.patientId)) {  // opened from elsewhere meanwhile
                m_tabs->setCurrentWidget(open);
                return;
            }
            statusBar()->clearMessage();
            const StudySummary &s = loaded->value();
            auto *viewer = new StudyViewer(m_workstation->localStore(), m_workstation->images(), s);
            addViewer(viewer, s);
            followCache(viewer);  // images the list gained while it was read (an import still landing) join it
            if (!s.sexDisagreement.isEmpty())
                statusBar()->showMessage(tr("⚠ The images of this study record the patient's sex differently (%1): each image shows its own").arg(s.sexDisagreement), 20000);
        });
    }
    return nullptr;
}

bool MainWindow::hasMoreThan(const StudySummary &listed, const StudySummary &shown)
{
    // The cache's list counts each series' images (listedInstances) or lists them (instances).
    for (const SeriesSummary &s : listed.series) {
        const auto have = std::find_if(shown.series.begin(), shown.series.end(), [&s](const SeriesSummary &m) { return m.seriesInstanceUid == s.seriesInstanceUid; });
        if (have == shown.series.end() || std::max(int(s.instances.size()), s.listedInstances) > int(have->instances.size()))
            return true;
    }
    return false;
}

void MainWindow::addArrivedSeries(StudyViewer *viewer, const StudySummary &listed)
{
    // One read at a time per viewer; a list that changed meanwhile asks again when it lands.
    if (viewer->property("spectrumReadingArrived").toBool())
        return;
    viewer->setProperty("spectrumReadingArrived", true);
    whenDone(m_workstation->loadStudy(listed), viewer, [this, viewer, listed](const Result<StudySummary> &r) {
        viewer->setProperty("spectrumReadingArrived", false);
        // The list moved on while this was read: read again for what came since (its counts changed; the list
        // counts images, it does not list them).
        const StudySummary *now = m_workstation->findStudy(listed.identity.studyInstanceUid);
        if (now && now->identity.patientId == listed.identity.patientId && !now->identityConflict
            && (now->instanceCount != listed.instanceCount || now->series.size() != listed.series.size()))
            QMetaObject::invokeMethod(this, [this, viewer = QPointer<StudyViewer>(viewer), again = *now] {
                if (viewer)
                    addArrivedSeries(viewer, again);
            }, Qt::QueuedConnection);
        if (!r.isOk()) {  // what came is not shown: said, not dropped silently
            statusBar()->showMessage(tr("Images that came for the open study of %1 are not shown: %2")
                                         .arg(DicomIdentity::displayName(viewer->study().identity.patientName), r.error().toString()));
            return;
        }
        StudySummary merged = viewer->study();
        bool grown = false;
        for (const SeriesSummary &s : r.value().series) {
            const auto have = std::find_if(merged.series.begin(), merged.series.end(), [&s](const SeriesSummary &m) { return m.seriesInstanceUid == s.seriesInstanceUid; });
            if (have == merged.series.end()) {
                merged.series << s;
                merged.instanceCount += int(s.instances.size());
                if (!merged.modalities.contains(s.modality))
                    merged.modalities << s.modality;
                grown = true;
                continue;
            }
            // Images of a series on screen that came since: added in their place — not those a rejection note
            // of the study withdraws (the viewer leaves them out).
            for (const InstanceRef &i : s.instances) {
                ImageRef ref;
                ref.sopInstanceUid = i.sopInstanceUid;
                if (!viewer->findings()->rejectionOf(ref).isEmpty())
                    continue;
                if (std::none_of(have->instances.begin(), have->instances.end(), [&i](const InstanceRef &m) { return m.sopInstanceUid == i.sopInstanceUid; })) {
                    have->instances << i;
                    ++merged.instanceCount;
                    grown = true;
                }
            }
            std::stable_sort(have->instances.begin(), have->instances.end(), [](const InstanceRef &a, const InstanceRef &b) {
                return a.instanceNumber != b.instanceNumber ? a.instanceNumber < b.instanceNumber : a.sopInstanceUid < b.sopInstanceUid;
            });
        }
        // What the whole study's images say of the patient now (a sex recorded otherwise in an image just come).
        if (merged.sexDisagreement != r.value().sexDisagreement) {
            merged.sexDisagreement = r.value().sexDisagreement;
            merged.identity.patientSex = r.value().identity.patientSex;
            grown = true;
        }
        if (grown)
            viewer->setStudy(merged);
    });
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
// MainWindow: reading against the patient's other studies — finding them for each opened study, opening one
// beside it (from the cache, or streamed from an archive), and the View menu's layouts and links.
#include "shell/mainwindow.h"
#include "browser/priorspanel.h"
#include "viewer/studyviewer.h"
#include "viewer/panelinks.h"
#include "stores/transferspanel.h"

#include "spectrum/stores/reading/priorprefetch.h"
#include "spectrum/stores/reading/priorsearch.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/reading/studystreamer.h"

#include <QActionGroup>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QMenu>
#include <QSpinBox>
#include <QStatusBar>

namespace spectrum {

void MainWindow::findPriorsFor(StudyViewer *viewer)
{
    auto *search = new PriorSearch(m_workstation->registry(), m_workstation->studies(), viewer->study(), viewer);
    search->setObjectName(QStringLiteral("priorSearch"));
    connect(search, &PriorSearch::changed, viewer, [viewer, search] { viewer->priorsPanel()->setPriors(search->result(), !search->isFinished()); });
    connect(search, &PriorSearch::finished, viewer, [viewer, search] { viewer->priorsPanel()->setPriors(search->result(), false); });
    // A prior fetched or pushed meanwhile shows as here.
    connect(m_workstation, &Workstation::studiesChanged, search, [this, search] { search->setCached(m_workstation->studies()); });
    connect(viewer->priorsPanel(), &PriorsPanel::openRequested, this, [this, viewer](int index) { openPrior(viewer, index); });
    search->start();
}

void MainWindow::configurePrefetcher()
{
    PriorPrefetcher *prefetcher = m_workstation->prefetcher();
    if (!prefetcher)
        return;
    // The reader waits while a study on screen is still arriving: priors hold back until it is in.
    // The prefetcher is the workstation's, which may outlive this window: its questions go nowhere once it is gone.
    const QPointer<MainWindow> self(this);
    prefetcher->setForegroundBusy([this, self] {
        if (!self)
            return false;
        for (int i = 1; i < m_tabs->count(); ++i) {
            auto *viewer = qobject_cast<StudyViewer *>(m_tabs->widget(i));
            if (viewer && viewer->streamer() && !viewer->streamer()->isComplete())
                return true;
        }
        return false;
    });
    // What must stay in the cache: every study open in a tab, and what is open beside it.
    prefetcher->setProtectedBytes([this, self] {
        qint64 bytes = 0;
        if (!self)
            return bytes;
        for (int i = 1; i < m_tabs->count(); ++i) {
            auto *viewer = qobject_cast<StudyViewer *>(m_tabs->widget(i));
            if (!viewer)
                continue;
            QList<const StudySummary *> open{&viewer->study()};
            for (int c = 0; c < viewer->comparison()->count(); ++c)
                open << &viewer->comparison()->study(c);
            for (const StudySummary *s : open) {
                if (const StudySummary *here = m_workstation->findStudy(s->identity.studyInstanceUid))
                    bytes += here->bytes;
            }
        }
        return bytes;
    });
    connect(prefetcher, &PriorPrefetcher::started, this, [this](StudyStreamer *streamer, const QString &title, bool prior) {
        trackStudy(streamer, prior ? tr("%1 (prior, prefetched)").arg(title) : tr("%1 (prefetched: a saved search lists it)").arg(title));
    });
    connect(prefetcher, &PriorPrefetcher::priorDone, this, [this](const QString &, const QString &outcome) {
        if (!outcome.isEmpty())
            statusBar()->showMessage(tr("Prior not prefetched: %1").arg(outcome), 6000);
    });
}

void MainWindow::openPrior(StudyViewer *viewer, int index)
{
    const PriorList &list = viewer->priorsPanel()->priors();
    if (index < 0 || index >= list.studies.size())
        return;
    const PriorStudy prior = list.studies[index];
    const DicomIdentity &id = prior.identity;
    for (int i = 0; i < viewer->comparison()->count(); ++i) {
        if (viewer->comparison()->study(i).identity.studyInstanceUid == id.studyInstanceUid) {
            viewer->comparison()->openBeside(viewer->comparison()->study(i));  // open already: beside again
            return;
        }
    }
    if (prior.isCached() || prior.stores.isEmpty()) {
        if (const StudySummary *read = m_workstation->loadedStudy(id.studyInstanceUid, id.patientId); read && !read->identityConflict) {
            viewer->comparison()->openBeside(*read);
            return;
        }
        for (const StudySummary &s : m_workstation->studies()) {
            if (s.identity.studyInstanceUid == id.studyInstanceUid && s.identity.patientId == id.patientId && !s.identityConflict) {
                // Its instances read from the cache first (off the GUI thread).
                viewer->priorsPanel()->setOpening(id.studyInstanceUid, tr("reading it from the cache…"));
                whenDone(m_workstation->loadStudy(s), viewer, [viewer, uid = id.studyInstanceUid](const Result<StudySummary> &r) {
                    if (!r.isOk())
                        viewer->priorsPanel()->setOpening(uid, tr("cannot be opened: %1").arg(r.error().toString()));
                    else if (r.value().identityConflict)
                        viewer->priorsPanel()->setOpening(uid, tr("not opened: the cache holds this study under more than one patient"));
                    else if (!viewer->comparison()->openBeside(r.value()))
                        viewer->priorsPanel()->setOpening(uid, tr("not opened: it is not plainly this patient's"));
                });
                return;
            }
        }
    }
    StoreRegistry *registry = m_workstation->registry();
    const QStringList nearest = registry ? registry->nearestFirst(prior.stores) : QStringList();
    if (nearest.isEmpty()) {
        viewer->priorsPanel()->setOpening(id.studyInstanceUid, tr("cannot be opened: no configured store holds it"));
        return;
    }
    // Streamed in like any study: the slices in view first. The viewer owns the stream once it has the listing.
    auto *streamer = new StudyStreamer(registry, m_workstation->cache(), nearest.first(), id.studyInstanceUid, viewer);
    streamer->setFallbacks(nearest.mid(1));
    streamer->setExpectedInstances(prior.instances);
    viewer->priorsPanel()->setOpening(id.studyInstanceUid, tr("fetching from %1…").arg(nearest.first()));
    auto opened = std::make_shared<bool>(false);
    // Opened on its first look (the slice a stack opens at, found with two small queries), as the study being
    // read is; the whole listing then completes it in place.
    connect(streamer, &StudyStreamer::firstLookReady, viewer, [viewer, streamer, id, opened] {
        if (*opened)
            return;
        if (!viewer->comparison()->openBeside(streamer->firstLook(), streamer))  // refused (and the stream deleted): said on its row
            return viewer->priorsPanel()->setOpening(id.studyInstanceUid, tr("not opened: the archive gives it for another patient"));
        *opened = true;
    });
    auto tracked = std::make_shared<bool>(false);  // its transfer row, from its first layout or its listing
    auto track = [this, streamer, tracked, store = nearest.first()](const StudySummary &study) {
        if (!std::exchange(*tracked, true))
            trackStudy(streamer, tr("%1 — %2 from %3 (prior)").arg(DicomIdentity::displayName(study.identity.patientName),
                                                                               study.identity.studyDescription, store));
    };
    // While it streams in before it is listed, laid out as it comes (as the study being read is).
    connect(streamer, &StudyStreamer::laidOut, viewer, [viewer, streamer, opened, track] {
        if (!*opened || streamer->isListed())
            return;
        if (viewer->comparison()->update(streamer->provisional()))
            track(streamer->provisional());
    });
    connect(streamer, &StudyStreamer::listed, viewer, [viewer, streamer, id, opened, track] {
        const StudySummary study = streamer->study();
        if (*opened) {
            if (!viewer->comparison()->update(study))
                return;  // the listing disagrees on the patient: its panes were cleared, and it said why
        } else if (!viewer->comparison()->openBeside(study, streamer)) {  // refused (and the stream deleted): said on its row
            return viewer->priorsPanel()->setOpening(id.studyInstanceUid, tr("not opened: the archive lists it under another patient"));
        }
        *opened = true;
        track(study);
    });
    connect(streamer, &StudyStreamer::failed, viewer, [viewer, streamer, id, opened](const Error &e) {
        if (*opened) {  // opened on its first look, then its listing failed: closed again, and said
            Q_EMIT viewer->errorOccurred(e);
            return viewer->comparison()->close(id.studyInstanceUid, tr("could not be listed: %1").arg(e.message()));
        }
        viewer->priorsPanel()->setOpening(id.studyInstanceUid, tr("could not be opened: %1").arg(e.message()));
        streamer->deleteLater();
    });
    streamer->start();
}

bool MainWindow::openMostRecentComparable()
{
    StudyViewer *viewer = currentViewer();
    if (!viewer)
        return false;
    const int index = viewer->priorsPanel()->priors().mostRecentComparable(viewer->study().identity);
    if (index < 0) {
        statusBar()->showMessage(tr("No earlier comparable study of this patient (same modality and body part or description) was found."), 5000);
        return false;
    }
    openPrior(viewer, index);
    return true;
}

void MainWindow::addCompareActions(QMenu *view)
{
    auto add = [this](QMenu *menu, const QString &text, const QKeySequence &key, auto slot) {
        QAction *a = menu->addAction(text, this, slot);
        a->setShortcut(key);
        return a;
    };
    QMenu *layouts = view->addMenu(tr("&Layout"));
    layouts->setObjectName(QStringLiteral("layoutMenu"));
    for (const auto &[text, key, rows, columns] : {std::tuple{tr("&1 × 1"), QStringLiteral("Ctrl+Alt+1"), 1, 1},
                                                  std::tuple{tr("1 × &2"), QStringLiteral("Ctrl+Alt+2"), 1, 2},
                                                  std::tuple{tr("1 × &3"), QStringLiteral("Ctrl+Alt+3"), 1, 3},
                                                  std::tuple{tr("2 × 1"), QString(), 2, 1},
                                                  std::tuple{tr("2 × 2 (&4)"), QStringLiteral("Ctrl+Alt+4"), 2, 2},
                                                  std::tuple{tr("2 × 3 (&6)"), QStringLiteral("Ctrl+Alt+6"), 2, 3},
                                                  std::tuple{tr("3 × 3 (&9)"), QStringLiteral("Ctrl+Alt+9"), 3, 3},
                                                  std::tuple{tr("3 × 4"), QString(), 3, 4},
                                                  std::tuple{tr("4 × 4 (1&6)"), QStringLiteral("Ctrl+Alt+0"), 4, 4}}) {
        const int r = rows, c = columns;
        add(layouts, text, QKeySequence(key), [this, r, c] {
            if (StudyViewer *v = currentViewer())
                v->setGrid(r, c);
        });
    }
    layouts->addAction(tr("&Other…"), this, [this] {
        StudyViewer *v = currentViewer();
        if (!v)
            return;
        QDialog dialog(this);
        dialog.setWindowTitle(tr("Layout"));
        auto *form = new QFormLayout(&dialog);
        auto *rows = new QSpinBox, *columns = new QSpinBox;
        rows->setRange(1, 4);
        columns->setRange(1, 4);
        rows->setValue(v->gridRows());
        columns->setValue(v->gridColumns());
        form->addRow(tr("Rows"), rows);
        form->addRow(tr("Columns"), columns);
        auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
        connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
        connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
        form->addRow(buttons);
        if (dialog.exec() == QDialog::Accepted)
            v->setGrid(rows->value(), columns->value());
    });
    QAction *sync = add(view, tr("&Linked scrolling"), Qt::Key_S, [this] {
        if (StudyViewer *v = currentViewer())
            v->links()->setSynchronized(!v->links()->isSynchronized());
    });
    sync->setCheckable(true);
    sync->setToolTip(tr("The other panes follow the active one through the patient: the same study by place, "
                        "another study's same-plane series by position. Shift+wheel scrolls one pane alone to set the offset."));
    QAction *linkWindow = add(view, tr("Link &window/level"), QKeySequence(QStringLiteral("Shift+W")), [this] {
        if (StudyViewer *v = currentViewer())
            v->links()->setWindowLinked(!v->links()->isWindowLinked());
    });
    linkWindow->setCheckable(true);
    QAction *linkZoom = add(view, tr("Link &zoom"), QKeySequence(QStringLiteral("Shift+Z")), [this] {
        if (StudyViewer *v = currentViewer())
            v->links()->setZoomLinked(!v->links()->isZoomLinked());
    });
    linkZoom->setCheckable(true);
    QAction *lines = add(view, tr("Reference &lines"), QKeySequence(QStringLiteral("Shift+R")), [this](bool on) {
        for (int i = 1; i < m_tabs->count(); ++i) {
            if (auto *v = qobject_cast<StudyViewer *>(m_tabs->widget(i)))
                v->links()->setReferenceLinesVisible(on);
        }
    });
    lines->setCheckable(true);
    lines->setChecked(true);
    lines->setToolTip(tr("The active pane's slice drawn as a line on the panes of other orientations"));
    add(view, tr("Compare with the most recent &prior"), QKeySequence(QStringLiteral("Shift+P")), [this] { openMostRecentComparable(); });
    view->addSeparator();
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "shell/hangingprotocols.h"
#include "shell/mainwindow.h"
#include "shell/workstation.h"
#include "browser/priorspanel.h"
#include "viewer/protocolsdialog.h"
#include "viewer/seriespane.h"
#include "viewer/studyviewer.h"
#include "viewer/panelinks.h"

#include <QAction>
#include <QInputDialog>
#include <QMenu>
#include <QMessageBox>
#include <QPointer>
#include <QRegularExpression>
#include <QStatusBar>

namespace spectrum {

HangingProtocols::HangingProtocols(MainWindow *window, Workstation *workstation) : QObject(window), m_window(window), m_workstation(workstation) {}

Error HangingProtocols::loadFile(const QString &path)
{
    m_file = path;
    Result<ProtocolSet> set = ProtocolSet::load(path);
    if (!set.isOk()) {
        m_protocols = ProtocolSet::builtIn();
        m_window->statusBar()->showMessage(tr("Hanging protocols: %1 — the built-in ones are used").arg(set.error().message()));
        return set.error();
    }
    m_protocols = set.takeValue();
    return Error();
}

const StudySummary *HangingProtocols::cachedComparablePrior(StudyViewer *viewer) const
{
    const PriorList &priors = viewer->priorsPanel()->priors();
    const int index = priors.mostRecentComparable(viewer->study().identity);
    if (index < 0 || !priors.studies[index].isCached())
        return nullptr;
    const DicomIdentity &id = priors.studies[index].identity;
    for (int i = 0; i < viewer->comparison()->count(); ++i) {
        if (viewer->comparison()->study(i).identity.studyInstanceUid == id.studyInstanceUid)
            return &viewer->comparison()->study(i);
    }
    // Read from the cache when the study opened (openFromCache()), with its instances.
    const StudySummary *read = m_workstation->loadedStudy(id.studyInstanceUid, id.patientId);
    return read && !read->identityConflict ? read : nullptr;
}

bool HangingProtocols::readComparablePriorFirst(StudyViewer *viewer, const std::function<void()> &then)
{
    const PriorList &priors = viewer->priorsPanel()->priors();
    const int index = priors.mostRecentComparable(viewer->study().identity);
    if (index < 0 || !priors.studies[index].isCached() || cachedComparablePrior(viewer))
        return false;
    const DicomIdentity id = priors.studies[index].identity;
    for (const StudySummary &s : m_workstation->studies()) {
        if (s.identity.studyInstanceUid != id.studyInstanceUid || s.identity.patientId != id.patientId || s.identityConflict)
            continue;
        // In the cache but not read (the study came from an archive; the prior arrived later): its instances first.
        // Whatever the read gives, `then` runs once, and finds it read or not.
        whenDone(m_workstation->loadStudy(s), viewer, [then](const Result<StudySummary> &) { then(); });
        return true;
    }
    return false;
}

void HangingProtocols::apply(StudyViewer *viewer, int index, bool unlessMoved)
{
    if (!viewer || (unlessMoved && !viewer->isAsOpened()))
        return;
    if (readComparablePriorFirst(viewer, [this, viewer, index, unlessMoved] {
            if (!unlessMoved || viewer->isAsOpened())  // the reader may have moved while the prior was read
                applyNow(viewer, index);
        }))
        return;
    applyNow(viewer, index);
}

void HangingProtocols::applyNow(StudyViewer *viewer, int index)
{
    const StudySummary *prior = cachedComparablePrior(viewer);
    const StudySummary study = viewer->study();
    HangingPlan plan;
    if (index >= 0 && m_protocols.matches(index, study, prior != nullptr))
        plan = m_protocols.plan(index, study, prior);
    else
        plan = m_protocols.planFor(study, prior);
    // The prior's list is copied: applyPlan may change the workstation's list under a pointer into it.
    const std::optional<StudySummary> priorCopy = prior ? std::optional<StudySummary>(*prior) : std::nullopt;
    viewer->applyPlan(plan, priorCopy ? &*priorCopy : nullptr);
    if (!plan.name.isEmpty())
        m_window->statusBar()->showMessage(tr("Hanging protocol: %1").arg(plan.name), 5000);
    // A comparable prior only in an archive: said, and a key away.
    const PriorList &priors = viewer->priorsPanel()->priors();
    const int comparable = priors.mostRecentComparable(study.identity);
    if (!prior && comparable >= 0)
        m_window->statusBar()->showMessage(tr("A comparable prior (%1) is in %2: Shift+P opens it beside this study")
                                     .arg(DicomIdentity::displayDate(priors.studies[comparable].identity.studyDate),
                                          priors.studies[comparable].isCached() ? tr("the local cache")
                                                                                : priors.studies[comparable].stores.join(QStringLiteral(", "))),
                                 8000);
}

void HangingProtocols::step(int step)
{
    StudyViewer *viewer = m_window->currentViewer();
    if (!viewer)
        return;
    if (readComparablePriorFirst(viewer, [this, step, viewer = QPointer<StudyViewer>(viewer)] {
            if (viewer && viewer == m_window->currentViewer())
                stepNow(viewer, step);
        }))
        return;
    stepNow(viewer, step);
}

void HangingProtocols::stepNow(StudyViewer *viewer, int step)
{
    const QList<int> matching = m_protocols.matching(viewer->study(), cachedComparablePrior(viewer) != nullptr);
    if (matching.isEmpty()) {
        m_window->statusBar()->showMessage(tr("No hanging protocol matches this study."), 4000);
        return;
    }
    const int at = int(matching.indexOf(viewer->plan().protocol));
    const int next = at < 0 ? (step > 0 ? 0 : int(matching.size()) - 1) : int((at + step + matching.size()) % matching.size());
    applyNow(viewer, matching[next]);
}

Error HangingProtocols::saveLayout(const QString &name)
{
    StudyViewer *viewer = m_window->currentViewer();
    if (!viewer)
        return Error(ErrorCode::InvalidArgument, tr("no study is open"));
    if (name.trimmed().isEmpty())
        return Error(ErrorCode::InvalidArgument, tr("a protocol needs a name"));
    if (m_file.isEmpty())
        return Error(ErrorCode::InvalidArgument, tr("no protocol file is set"));
    const StudySummary &study = viewer->study();
    // Patterns that match exactly this text (wildcard characters in it stand for themselves).
    auto literal = [](const QString &text) {
        QString s = text.simplified();
        s.replace(QRegularExpression(QStringLiteral("[*?|]")), QStringLiteral("?"));
        return s;
    };
    HangingProtocol p;
    p.name = name.trimmed();
    p.match.modalities = study.modalities;
    for (const SeriesSummary &s : study.series) {
        if (!s.bodyPart.isEmpty()) {
            p.match.bodyPart = literal(s.bodyPart);
            break;
        }
    }
    p.match.description = literal(study.identity.studyDescription);
    p.rows = viewer->gridRows();
    p.columns = viewer->gridColumns();
    bool anyPrior = false;
    for (int i = 0; i < viewer->paneCount(); ++i) {
        SeriesPane *pane = viewer->pane(i);
        SeriesRule r;
        if (pane->seriesIndex() >= 0) {
            const SeriesSummary &s = pane->study()->series[pane->seriesIndex()];
            r.study = pane->study() == &study ? SeriesRule::Study::Current : SeriesRule::Study::Prior;
            anyPrior = anyPrior || r.study == SeriesRule::Study::Prior;
            // A prior's series as "the same as" a pane of the current study showing that kind of series.
            for (int j = 0; j < i && r.study == SeriesRule::Study::Prior; ++j) {
                SeriesPane *other = viewer->pane(j);
                if (other->study() == &study && other->seriesIndex() >= 0
                    && study.series[other->seriesIndex()].description.simplified().compare(s.description.simplified(), Qt::CaseInsensitive) == 0)
                    r.sameAsPane = j;
            }
            if (r.sameAsPane < 0) {
                r.description = literal(s.description);
                r.modality = s.modality;
            }
        }
        if (pane->viewport()->hasImage()) {
            const VoiWindow w = pane->viewport()->window();
            r.window = QStringLiteral("%1/%2").arg(w.center).arg(w.width);
        }
        p.panes << r;
    }
    p.match.priors = anyPrior ? ProtocolMatch::Priors::Required : ProtocolMatch::Priors::Any;
    p.linkScroll = viewer->links()->isSynchronized();
    p.linkWindow = viewer->links()->isWindowLinked();
    p.mpr = viewer->isMprShown();
    ProtocolSet changed = m_protocols;
    changed.protocols.prepend(p);  // the reader's own first: it wins over the built-ins
    if (Error e = changed.save(m_file); e.isError())
        return e;
    m_protocols = changed;
    m_window->statusBar()->showMessage(tr("Saved hanging protocol “%1”").arg(p.name), 5000);
    return Error();
}

void HangingProtocols::edit()
{
    ProtocolsDialog dialog(m_protocols, m_window->currentViewer() ? &m_window->currentViewer()->study() : nullptr, m_window);
    if (dialog.exec() != QDialog::Accepted)
        return;
    if (!m_file.isEmpty()) {
        if (Error e = dialog.protocols().save(m_file); e.isError()) {
            QMessageBox::warning(m_window, tr("Hanging protocols"), tr("The protocols could not be saved: %1").arg(e.message()));
            return;
        }
    }
    m_protocols = dialog.protocols();
}

void HangingProtocols::addMenu(QMenu *view)
{
    QMenu *menu = view->addMenu(tr("&Hanging protocols"));
    QAction *next = menu->addAction(tr("&Next protocol"), this, [this] { step(1); });
    next->setShortcut(QKeySequence(Qt::Key_N));
    QAction *previous = menu->addAction(tr("&Previous protocol"), this, [this] { step(-1); });
    previous->setShortcut(QKeySequence(QStringLiteral("Shift+N")));
    menu->addAction(tr("&Apply the matching protocol again"), this, [this] { apply(m_window->currentViewer()); });
    menu->addSeparator();
    menu->addAction(tr("&Save current layout as protocol…"), this, [this] {
        if (!m_window->currentViewer())
            return;
        bool ok = false;
        const QString name = QInputDialog::getText(m_window, tr("Save layout as protocol"), tr("Name:"), QLineEdit::Normal,
                                                   m_window->currentViewer()->study().identity.studyDescription, &ok);
        if (!ok)
            return;
        if (Error e = saveLayout(name); e.isError())
            QMessageBox::warning(m_window, tr("Save layout as protocol"), e.message());
    });
    menu->addAction(tr("&Edit protocols…"), this, &HangingProtocols::edit);
}

} // namespace spectrum

#include "mainwindow.h"

// The main window's findings: File ▸ Save findings — what was drawn or edited on the study in view, measured on
// the images as stored and written as a Measurement Report per study, kept in the cache and sent to the archive
// the study came from.

#include "imageviewport.h"
#include "studyviewer.h"
#include "transferspanel.h"

#include "spectrum/stores/findingsreports.h"
#include "spectrum/stores/storeregistry.h"
#include "spectrum/stores/studystreamer.h"

#include <QSet>
#include <QSettings>
#include <QStatusBar>

namespace spectrum {

QString MainWindow::observerName() const
{
    QSettings settings;
    const QString name = settings.value(QStringLiteral("findings/observerName")).toString();
    if (!name.isEmpty())
        return name;
    return qEnvironmentVariable("USER");  // better a login than no one: the reader can set a name (Settings)
}

void MainWindow::saveFindings()
{
    StudyViewer *viewer = currentViewer();
    // To the archive the study came from; a study only in the cache keeps its findings there.
    saveFindingsTo(viewer && viewer->streamer() ? viewer->streamer()->storeName() : QString());
}

void MainWindow::saveFindingsTo(const QString &store)
{
    saveDocuments(store, true);
}

void MainWindow::saveView()
{
    StudyViewer *viewer = currentViewer();
    saveDocuments(viewer && viewer->streamer() ? viewer->streamer()->storeName() : QString(), false);
}

void MainWindow::saveDocuments(const QString &store, bool findings)
{
    StudyViewer *viewer = currentViewer();
    auto fail = [this](const Error &e) {
        statusBar()->showMessage(tr("Findings not saved: %1").arg(e.toString()));
        Q_EMIT findingsSaved(0, e);
    };
    if (!viewer)
        return fail(Error(ErrorCode::InvalidArgument, tr("no study is open")));
    FindingsModel *model = viewer->findings();
    model->assignTrackingUids();  // the report and the model name each finding alike
    FindingsToSave what;
    what.observerName = observerName();
    QHash<QString, DicomIdentity> studies;
    studies.insert(viewer->study().identity.studyInstanceUid, viewer->study().identity);
    for (int i = 0; i < viewer->comparisonCount(); ++i)
        studies.insert(viewer->comparison(i).identity.studyInstanceUid, viewer->comparison(i).identity);
    for (const Finding &f : model->all()) {
        if (!f.changed || !findings)
            continue;
        if (f.image.sopInstanceUid.isEmpty() || f.image.studyInstanceUid.isEmpty())
            return fail(Error(ErrorCode::InvalidArgument, tr("a finding lies on an image with no DICOM identity")));
        what.findings << ReportedFinding{f.annotation, f.image, {}, f.label, {}};
        what.studies.insert(f.image.studyInstanceUid, studies.value(f.image.studyInstanceUid));
    }
    if (findings && model->keyImagesChanged()) {
        what.keyImages = model->markedKeyImages();
        what.keyNote = model->keyNote();
        for (const ImageRef &r : what.keyImages)
            what.studies.insert(r.studyInstanceUid, studies.value(r.studyInstanceUid));
    }
    if (findings && what.findings.isEmpty() && what.keyImages.isEmpty()) {
        statusBar()->showMessage(tr("No new findings to save."), 5000);
        Q_EMIT findingsSaved(0, Error());
        return;
    }
    // The series in view as it is shown, with every finding on its images: a presentation state.
    ImageViewport *vp = viewer->viewport();
    if (vp->hasImage() && viewer->seriesIndex() >= 0) {
        const SeriesSummary &series = viewer->activeStudy().series[viewer->seriesIndex()];
        ViewToSave view;
        QSet<QString> sops;
        for (const InstanceRef &i : series.instances) {
            view.instanceKeys << i.key;
            sops.insert(i.sopInstanceUid);
        }
        view.view = vp->presentationView();
        const ImageInfo &info = vp->image().info;
        view.columns = info.columns;
        view.rows = info.rows;
        view.rescaleSlope = info.rescaleSlope;
        view.rescaleIntercept = info.rescaleIntercept;
        view.rescaleType = info.valueUnit() == QLatin1String("HU") ? QStringLiteral("HU") : info.rescaleType;
        view.description = tr("%1, W %2 L %3").arg(series.description.isEmpty() ? tr("Series %1").arg(series.seriesNumber) : series.description)
                               .arg(vp->window().width, 0, 'f', 0).arg(vp->window().center, 0, 'f', 0);
        for (const Finding &f : model->all())
            if (sops.contains(f.image.sopInstanceUid))
                view.findings << ReportedFinding{f.annotation, f.image, {}, f.label, {}};
        what.view = view;
        const QString study = viewer->activeStudy().identity.studyInstanceUid;
        what.studies.insert(study, studies.value(study));
    }
    if (!findings && !what.view) {
        statusBar()->showMessage(tr("No image in view: no view to save."), 5000);
        Q_EMIT findingsSaved(0, Error());
        return;
    }
    for (auto it = what.studies.constBegin(); it != what.studies.constEnd(); ++it)
        if (it.value().studyInstanceUid.isEmpty())
            return fail(Error(ErrorCode::InvalidArgument, tr("a finding lies on a study not open here (%1)").arg(it.key())));
    StoreRegistry *registry = m_workstation->registry();
    if (!registry || !m_workstation->cache())
        return fail(Error(ErrorCode::NotFound, tr("the workstation's cache is not open")));
    statusBar()->showMessage(tr("Saving %n finding(s)…", nullptr, int(what.findings.size())));
    whenDone(makeMeasurementReports(m_workstation->cache(), what), this, [this, store, registry, model = QPointer<FindingsModel>(model)](const Result<QList<SavedReport>> &made) {
        if (!made.isOk()) {
            statusBar()->showMessage(tr("Findings not saved: %1").arg(made.error().toString()));
            return Q_EMIT findingsSaved(0, made.error());
        }
        QList<QPair<QString, QByteArray>> instances;
        QStringList tracking;
        bool keyImages = false;
        for (const SavedReport &r : made.value()) {
            instances << qMakePair(r.sopInstanceUid, r.bytes);
            tracking << r.trackingUids;
            keyImages |= r.modality == QLatin1String("KO");
        }
        auto *job = registry->storeNewInstances(store, instances);
        m_transfers->addSend(job, tr("Findings: %n document(s) to %1", nullptr, int(instances.size())).arg(store.isEmpty() ? tr("this workstation") : store));
        whenDone(job, this, [this, store, tracking, model, keyImages, count = int(instances.size())](const Result<ExportSummary> &r) {
            const QString where = store.isEmpty() ? tr("this workstation") : store;
            if (!r.isOk() || r.value().stored.isEmpty()) {
                const Error e = r.isOk() ? Error(ErrorCode::Io, r.value().failed.isEmpty() ? tr("refused") : r.value().failed.first().second) : r.error();
                statusBar()->showMessage(tr("Findings kept on this workstation, not in %1: %2").arg(where, e.toString()));
                return Q_EMIT findingsSaved(0, e);
            }
            if (model) {
                model->markSaved(tracking);
                if (keyImages)
                    model->markKeyImagesSaved();
            }
            statusBar()->showMessage(tr("Findings saved to %1 (%n document(s))", nullptr, count).arg(where), 8000);
            Q_EMIT findingsSaved(count, Error());
        });
    });
}

} // namespace spectrum

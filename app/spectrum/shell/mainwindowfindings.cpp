// SPDX-License-Identifier: Apache-2.0
#include "shell/mainwindow.h"

#include "spectrum/stores/signin/signin.h"

// The main window's findings: File ▸ Save findings — what was drawn or edited on the study in view, measured on
// the images as stored and written as a Measurement Report per study, kept in the cache and sent to the archive
// the study came from.

#include "findings/findingsloader.h"
#include "viewer/imageexport.h"
#include "viewport/imageviewport.h"
#include "viewer/studyviewer.h"
#include "stores/transferspanel.h"

#include "spectrum/stores/exchange/deidentifiedexport.h"
#include "spectrum/stores/reading/findingsreports.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/reading/studystreamer.h"
#include "spectrum/imaging/codecs/videowriter.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QRadioButton>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSet>
#include <QTemporaryDir>
#include <QSettings>
#include <QStandardItemModel>
#include <QStatusBar>

namespace spectrum {

QString MainWindow::observerName() const
{
    // The reader the hospital's identity provider vouches for, when signed in.
    for (const SignIn *s : SignIn::all()) {
        if (s->isSignedIn() && !s->personName().isEmpty())
            return s->personName();
    }
    QSettings settings;
    const QString name = settings.value(QStringLiteral("findings/observerName")).toString();
    if (!name.isEmpty())
        return name;
    return qEnvironmentVariable("USER");  // better a login than no one: the reader sets a name in the findings panel
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
    for (int i = 0; i < viewer->comparison()->count(); ++i)
        studies.insert(viewer->comparison()->study(i).identity.studyInstanceUid, viewer->comparison()->study(i).identity);
    for (const Finding &f : model->all()) {
        if (!f.changed || !findings)
            continue;
        if (f.image.sopInstanceUid.isEmpty() || f.image.studyInstanceUid.isEmpty())
            return fail(Error(ErrorCode::InvalidArgument, tr("a finding lies on an image with no DICOM identity")));
        what.findings << ReportedFinding{f.annotation, f.image, {}, f.label, {}};
        what.studies.insert(f.image.studyInstanceUid, studies.value(f.image.studyInstanceUid));
    }
    model->setReaderName(observerName());
    // The marks this save writes (those made while it runs stay to be saved next).
    const std::pair<QList<ImageRef>, QList<ImageRef>> savedKeys{model->markedKeyImages(), model->unmarkedKeyImages()};
    if (findings && model->keyImagesChanged()) {
        what.keyImages = model->keyImagesToSave();
        what.keyNote = model->keyNoteToSave();
        for (const KeySelection &k : model->replacedKeySelections()) {
            ImageRef doc;
            doc.studyInstanceUid = k.document.identity.studyInstanceUid;
            doc.seriesInstanceUid = k.document.identity.seriesInstanceUid;
            doc.sopClassUid = k.document.identity.sopClassUid;
            doc.sopInstanceUid = k.uid;
            what.replacedKeySelections << doc;
        }
        for (const QList<ImageRef> *refs : {&what.keyImages, &what.replacedKeySelections})
            for (const ImageRef &r : *refs)
                what.studies.insert(r.studyInstanceUid, studies.value(r.studyInstanceUid));
    }
    if (findings && what.findings.isEmpty() && what.keyImages.isEmpty() && what.replacedKeySelections.isEmpty()) {
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
    whenDone(makeMeasurementReports(m_workstation->cache(), what), this,
             [this, store, registry, savedKeys, model = QPointer<FindingsModel>(model)](const Result<QList<SavedReport>> &made) {
        if (!made.isOk()) {
            statusBar()->showMessage(tr("Findings not saved: %1").arg(made.error().toString()));
            return Q_EMIT findingsSaved(0, made.error());
        }
        // The documents first; a rejection note only once they are all stored — never an old selection withdrawn
        // without its replacement in the archive.
        QList<QPair<QString, QByteArray>> documents, notes;
        QStringList tracking;
        bool keyImages = false;
        QList<KeySelection> written;
        QStringList withdrawn;
        QString why;
        for (const SavedReport &r : made.value()) {
            const bool note = r.keys && r.keys->isRejectionNote();
            (note ? notes : documents) << qMakePair(r.sopInstanceUid, r.bytes);
            tracking << r.trackingUids;
            if (!r.keys)
                continue;
            keyImages = true;
            if (note) {
                for (const ImageRef &d : r.keys->documents)
                    withdrawn << d.sopInstanceUid;
                why = tr("replaced here (%1)").arg(r.keys->title);
            } else {
                written << KeySelection{r.sopInstanceUid, *r.keys, keySelectionOrigin(*r.keys)};
            }
        }
        const QString where = store.isEmpty() ? tr("this workstation") : store;
        auto refused = [](const Result<ExportSummary> &r) -> std::optional<Error> {
            if (!r.isOk())
                return r.error();
            if (!r.value().failed.isEmpty())
                return Error(ErrorCode::Io, QStringLiteral("%1: %2").arg(r.value().failed.first().first, r.value().failed.first().second));
            if (r.value().stored.isEmpty())
                return Error(ErrorCode::Io, QStringLiteral("refused"));
            return std::nullopt;
        };
        auto *job = registry->storeNewInstances(store, documents);
        trackSend(job, tr("Findings: %n document(s) to %1", nullptr, int(documents.size() + notes.size())).arg(where));
        whenDone(job, this, [=](const Result<ExportSummary> &r) {
            if (const std::optional<Error> e = refused(r)) {
                statusBar()->showMessage(tr("Findings kept on this workstation, not all in %1: %2").arg(where, e->toString()));
                return Q_EMIT findingsSaved(0, *e);
            }
            if (model)
                model->markSaved(tracking);
            auto done = [this, where, model, keyImages, written, savedKeys, count = int(documents.size() + notes.size())](const QStringList &withdrawnNow,
                                                                                                                       const QString &whyNow) {
                if (model && keyImages)
                    model->keyImagesSaved(written, withdrawnNow, whyNow, savedKeys.first, savedKeys.second);
                statusBar()->showMessage(tr("Findings saved to %1 (%n document(s))", nullptr, count).arg(where), 8000);
                Q_EMIT findingsSaved(count, Error());
            };
            if (notes.isEmpty())
                return done({}, QString());
            auto *send = registry->storeNewInstances(store, notes);
            whenDone(send, this, [this, refused, done, withdrawn, why, where, model, written, savedKeys](const Result<ExportSummary> &n) {
                if (const std::optional<Error> e = refused(n)) {
                    // The new selection is there; the old one still counts in the archive: said, and kept unmarked here.
                    if (model)
                        model->keyImagesSaved(written, {}, QString(), savedKeys.first, {});
                    statusBar()->showMessage(tr("Key images saved to %1, but the selection they replace could not be withdrawn there: %2")
                                                 .arg(where, e->toString()));
                    return Q_EMIT findingsSaved(0, *e);
                }
                done(withdrawn, why);
            });
        });
    });
}

void MainWindow::exportImages()
{
    StudyViewer *viewer = currentViewer();
    if (!viewer || !viewer->viewport()->hasImage()) {
        QMessageBox::information(this, tr("Export images"), tr("Show an image first."));
        return;
    }
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Export images"));
    auto *image = new QRadioButton(tr("This image"));
    auto *series = new QRadioButton(viewer->viewport()->frameCount() > 1 ? tr("All its frames") : tr("The whole series (%n image(s))", nullptr, viewer->sliceCount()));
    image->setChecked(true);
    auto *format = new QComboBox;
    format->addItem(tr("PNG (lossless)"), int(ImageExportOptions::Format::Png));
    format->addItem(tr("JPEG"), int(ImageExportOptions::Format::Jpeg));
    format->addItem(tr("MP4 cine (H.264)"), int(ImageExportOptions::Format::Mp4));
    if (VideoWriter::program().isEmpty()) {  // run, not linked: without the ffmpeg program there is no cine
        format->setItemText(2, tr("MP4 cine (needs the ffmpeg program)"));
        if (auto *items = qobject_cast<QStandardItemModel *>(format->model()))
            items->item(2)->setEnabled(false);
    }
    auto *overlay = new QCheckBox(tr("With the overlay (findings, patient, window) as shown"));
    overlay->setChecked(true);
    auto *fps = new QDoubleSpinBox;
    fps->setRange(1, 60);
    fps->setValue(viewer->cine()->rate());
    fps->setSuffix(tr(" frames/s"));
    auto *target = new QLineEdit(QDir::home().filePath(QStringLiteral("spectrum-export")));
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Export"));
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto *form = new QFormLayout(&dialog);
    form->addRow(tr("What"), image);
    form->addRow(QString(), series);
    form->addRow(tr("As"), format);
    form->addRow(QString(), overlay);
    form->addRow(tr("Cine rate"), fps);
    form->addRow(tr("Folder (or .mp4 file)"), target);
    form->addRow(new QLabel(tr("Pictures for slides and teaching, not for reading. With the overlay they show who the patient is.")));
    form->addRow(buttons);
    if (dialog.exec() != QDialog::Accepted)
        return;
    ImageExportOptions o;
    o.what = image->isChecked() ? ImageExportOptions::What::ImageInView : ImageExportOptions::What::Series;
    o.format = ImageExportOptions::Format(format->currentData().toInt());
    o.withOverlay = overlay->isChecked() && o.format != ImageExportOptions::Format::Mp4;
    o.framesPerSecond = fps->value();
    o.target = target->text();
    if (o.format == ImageExportOptions::Format::Mp4 && !o.target.endsWith(QLatin1String(".mp4"), Qt::CaseInsensitive))
        o.target += QStringLiteral(".mp4");
    exportImagesTo(o);
}

void MainWindow::exportImagesTo(const ImageExportOptions &options)
{
    StudyViewer *viewer = currentViewer();
    auto *exporter = new ImageExporter(viewer, m_workstation->cache(), options, this);
    connect(exporter, &ImageExporter::finished, this, [this, exporter, target = options.target](int files, const Error &e) {
        exporter->deleteLater();
        statusBar()->showMessage(e.isError() ? tr("Images not exported: %1").arg(e.toString())
                                             : tr("Exported %n file(s) to %1", nullptr, files).arg(target), 8000);
        Q_EMIT imagesExported(files, e);
    });
    statusBar()->showMessage(tr("Exporting images…"));
    exporter->start();
}

void MainWindow::exportDeidentified()
{
    StudyViewer *viewer = currentViewer();
    if (!viewer) {
        QMessageBox::information(this, tr("Export de-identified copy"), tr("Open a study first."));
        return;
    }
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Export de-identified copy"));
    auto *folder = new QLineEdit(QDir::home().filePath(QStringLiteral("anonymous-study")));
    auto *browse = new QPushButton(tr("Choose…"));
    connect(browse, &QPushButton::clicked, &dialog, [&dialog, folder] {
        const QString d = QFileDialog::getExistingDirectory(&dialog, tr("Folder for the copy"), folder->text());
        if (!d.isEmpty())
            folder->setText(d);
    });
    // Or to a store: a research PACS, a teaching archive (configured like any other).
    auto *destination = new QComboBox;
    destination->addItem(tr("A folder"), QString());
    if (StoreRegistry *registry = m_workstation->registry())
        for (const StoreConfig &s : registry->config().stores())
            if (!s.isTheCache())
                destination->addItem(tr("Store: %1").arg(s.name), s.name);
    auto *dates = new QCheckBox(tr("Keep dates and times (Retain Longitudinal Temporal Information)"));
    auto *name = new QLineEdit;
    name->setPlaceholderText(tr("ANONYMOUS"));
    auto *id = new QLineEdit;
    id->setPlaceholderText(tr("a pseudonym of this copy"));
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Export"));
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto *form = new QFormLayout(&dialog);
    auto *where = new QHBoxLayout;
    where->addWidget(folder);
    where->addWidget(browse);
    form->addRow(tr("To"), destination);
    form->addRow(tr("Folder"), where);
    form->addRow(tr("Patient's name"), name);
    form->addRow(tr("Patient ID"), id);
    form->addRow(dates);
    form->addRow(new QLabel(tr("DICOM PS3.15 Basic Profile (all of Table E.1-1): names, IDs, addresses, institutions, descriptions, devices,\n"
                               "private data and overlays removed or replaced; report and annotation texts kept and listed after;\n"
                               "new UIDs; the pixels as they are — images that may show text in their pixels are listed after.")));
    form->addRow(buttons);
    if (dialog.exec() != QDialog::Accepted)
        return;
    DeidentifyOptions options;
    options.retainDates = dates->isChecked();
    options.patientName = name->text().trimmed();
    options.patientId = id->text().trimmed();
    exportDeidentifiedTo(folder->text(), options, destination->currentData().toString());
}

void MainWindow::exportDeidentifiedTo(const QString &folder, const DeidentifyOptions &options, const QString &store)
{
    StudyViewer *viewer = currentViewer();
    auto fail = [this](const Error &e) {
        statusBar()->showMessage(tr("Not exported: %1").arg(e.toString()));
        Q_EMIT deidentifiedExported(0, e);
    };
    if (!viewer || !m_workstation->cache())
        return fail(Error(ErrorCode::InvalidArgument, tr("no study open")));
    QStringList keys;
    for (const SeriesSummary &s : viewer->study().series) {
        if (isKeyImageSeries(s))
            continue;  // the study's own images, already listed
        for (const InstanceRef &i : s.instances)
            keys << i.key;
    }
    statusBar()->showMessage(tr("Exporting a de-identified copy of %n instance(s)…", nullptr, int(keys.size())));
    // To a store: written to a folder of its own first, sent from there, the folder gone after.
    std::shared_ptr<QTemporaryDir> staging = store.isEmpty() ? nullptr : std::make_shared<QTemporaryDir>();
    const QString target = staging ? staging->path() : folder;
    whenDone(spectrum::exportDeidentified(m_workstation->cache(), keys, options, target), this, [this, folder, store, staging](const Result<DeidentifiedExport> &r) {
        if (!r.isOk()) {
            // Whole or not at all: an image not here yet (the study still arriving) stops it, said as such.
            statusBar()->showMessage(r.error().code() == ErrorCode::NotFound
                                         ? tr("Not exported: an image of the study is not in the cache yet (%1); export once the study is here")
                                               .arg(r.error().toString())
                                         : tr("Not exported: %1").arg(r.error().toString()));
            return Q_EMIT deidentifiedExported(0, r.error());
        }
        const DeidentifiedExport &e = r.value();
        if (!store.isEmpty()) {
            StoreRegistry *registry = m_workstation->registry();
            if (!registry)
                return Q_EMIT deidentifiedExported(0, Error(ErrorCode::NotFound, tr("no store is configured")));
            auto *send = registry->exportFiles(store, e.files);
            trackSend(send, tr("De-identified copy: %n instance(s) to %1", nullptr, int(e.files.size())).arg(store));
            whenDone(send, this, [this, store, staging](const Result<ExportSummary> &sent) {
                if (!sent.isOk() || !sent.value().failed.isEmpty()) {
                    const Error err = sent.isOk() ? Error(ErrorCode::Io, sent.value().failed.first().second) : sent.error();
                    statusBar()->showMessage(tr("De-identified copy not all stored in %1: %2").arg(store, err.toString()));
                    return Q_EMIT deidentifiedExported(sent.isOk() ? int(sent.value().stored.size()) : 0, err);
                }
                statusBar()->showMessage(tr("De-identified copy of %n instance(s) stored in %1", nullptr, int(sent.value().stored.size())).arg(store), 10000);
                Q_EMIT deidentifiedExported(int(sent.value().stored.size()), Error());
            });
            if (!e.burnedIn.isEmpty())
                statusBar()->showMessage(tr("%n image(s) of the copy may show text in their pixels: check them in %1", nullptr, int(e.burnedIn.size())).arg(store));
            return;
        }
        statusBar()->showMessage(tr("De-identified copy of %n instance(s) in %1", nullptr, int(e.files.size())).arg(folder), 10000);
        if (!e.burnedIn.isEmpty() || e.textsKept > 0) {
            QStringList lines;
            for (const auto &[sop, why] : e.burnedIn)
                lines << tr("%1: %2").arg(sop, why);
            QMessageBox box(QMessageBox::Warning, tr("Check before sharing"),
                            tr("The copy is in %1. Check before sharing it:").arg(folder), QMessageBox::Ok, this);
            QString details = lines.join(QLatin1Char('\n'));
            if (e.textsKept > 0)
                details += (details.isEmpty() ? QString() : QStringLiteral("\n")) + tr("%n free text(s) in reports and notes kept as written.", nullptr, e.textsKept);
            box.setInformativeText(tr("%n image(s) may show text in their pixels; free text kept: %1.", nullptr, int(e.burnedIn.size())).arg(e.textsKept));
            box.setDetailedText(details);
            if (!m_quietDialogs)
                box.exec();
        }
        Q_EMIT deidentifiedExported(int(e.files.size()), Error());
    });
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "viewer/studyviewer.h"
#include "viewer/panelinks.h"
#include "viewer/panesettings.h"
#include "viewer/studycomparison.h"
#include "viewer/serieslist.h"
#include "volumes/mprview.h"
#include "volumes/mprvolume.h"
#include "viewport/displayimage.h"
#include "browser/priorspanel.h"

#include "spectrum/imaging/codecs/decodecounts.h"
#include "spectrum/stores/reading/imageloader.h"
#include "spectrum/stores/reading/studystreamer.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QIcon>
#include <QKeyEvent>
#include <QListWidget>
#include <QMimeData>
#include <QPixmap>
#include <QSplitter>
#include <QStackedWidget>

#include <functional>

namespace spectrum {

StudyViewer::StudyViewer(BlobStore *store, ImageMemoryCache *images, const StudySummary &study, StudyStreamer *streamer, QWidget *parent)
    : QWidget(parent), m_store(store), m_images(images), m_streamer(streamer), m_study(study), m_seriesList(new SeriesList), m_grid(new QGridLayout),
      m_priors(new PriorsPanel), m_segmentations(new SegmentationOverlay(store, this)), m_findings(new FindingsModel(this)),
      m_findingsLoader(new FindingsLoader(store, m_findings, this))
{
    m_links = new PaneLinks(this);
    m_cine = new CinePlayer(this);
    m_comparison = new StudyComparison(this);
    m_settings = new PaneSettings(this);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_seriesList->setIconSize(QSize(96, 96));
    m_seriesList->setObjectName(QStringLiteral("seriesList"));
    fillSeriesList();
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setSpacing(0);
    // The study's series above, the patient's other studies below.
    auto *left = new QSplitter(Qt::Vertical);
    left->setFixedWidth(240);
    left->addWidget(m_seriesList);
    left->addWidget(m_priors);
    left->setStretchFactor(0, 3);
    left->setStretchFactor(1, 2);
    layout->addWidget(left);
    auto *gridArea = new QWidget;
    gridArea->setLayout(m_grid);
    m_stack = new QStackedWidget;
    m_stack->addWidget(gridArea);
    layout->addWidget(m_stack, 1);

    if (m_streamer) {
        m_streamer->setParent(this);  // it fetches for this viewer, and stops with it
        wireStreamer(m_streamer);
    }
    StudyDecoder *decoder = decoderFor(m_streamer);
    connect(decoder, &StudyDecoder::ready, this, &StudyViewer::makeThumbnail);
    connect(decoder, &StudyDecoder::decodeFailed, this, &StudyViewer::makeThumbnail);  // another image of it may do
    connect(decoder, &StudyDecoder::tooLarge, this, &StudyViewer::makeThumbnail);
    // The thumbnails' decodes wait until the panes show their images (or half a second): nothing competes with
    // what the reader opened the study to see.
    QTimer::singleShot(500, this, [this] { startThumbnails(); });
    connect(m_segmentations, &SegmentationOverlay::changed, this, [this] {
        for (SeriesPane *p : m_panes)
            updateMasks(p);
    });
    m_segmentations->setStudy(m_study);
    m_findingsLoader->setStudy(m_study);
    connect(m_findings, &FindingsModel::keyImagesUpdated, this, [this] {
        const int before = int(m_study.series.size());
        const QList<std::pair<QString, QString>> shown = panePlaces();
        auto firstKeySeries = [this] {
            const auto it = std::find_if(m_study.series.begin(), m_study.series.end(), [](const SeriesSummary &s) { return isKeyImageSeries(s); });
            return int(it - m_study.series.begin());
        };
        const int keysBefore = firstKeySeries();
        applyKeySeries();
        relocatePanes(shown, false);  // a key series replaced under a pane: the pane keeps to its image
        // The key series' thumbnails, by index: made again where they are now; all of them when images were
        // rejected (a thumbnail may show one).
        const bool rejectedNow = m_findings->rejectedImages().size() != m_rejectedShown;
        m_rejectedShown = int(m_findings->rejectedImages().size());
        for (int i = rejectedNow ? 0 : std::min(keysBefore, firstKeySeries()); i < std::max(before, int(m_study.series.size())); ++i) {
            m_thumbnails.remove(i);
            m_thumbnailsAsked.remove(i);
            if (rejectedNow)
                showThumbnailOnRow(i);  // none until made again
        }
        if (rejectedNow || int(m_study.series.size()) != before
            || std::any_of(m_study.series.begin(), m_study.series.end(), [](const SeriesSummary &s) { return isKeyImageSeries(s); })) {
            fillSeriesList();
            const QSignalBlocker block(m_seriesList);  // the row of the series in view, as before
            m_seriesList->setCurrentRow(m_active && m_active->study() == &m_study ? m_active->seriesIndex() : -1);
            if (!m_thumbnailsWaiting)
                requestThumbnails();
        }
        for (SeriesPane *p : std::as_const(m_panes))
            p->viewport()->update();  // the key image mark
    });
    connect(m_findings, &FindingsModel::presentationStatesChanged, this, [this] {
        for (SeriesPane *p : std::as_const(m_panes)) {  // a state in use that a rejection note withdrew: no longer
            const PresentationState *state = p->viewport()->presentationState();
            if (state && m_findings->withdrawnDocuments().contains(state->identity.sopInstanceUid))
                p->viewport()->setPresentationState(nullptr, QString());
        }
    });
    setActivePane(addPane(m_study.series.isEmpty() ? -1 : 0));
    m_openedAt = panePlaces().value(0);
    wireSeriesList();
    if (m_study.series.isEmpty())
        viewport()->clear(tr("This study has no images."));
    else
        m_seriesList->setCurrentRow(0);
}

StudyViewer::~StudyViewer()
{
    // The decoders go after this viewer's body (its children): nothing of them may call back into a viewer (or panes)
    // half gone, nor start work for it.
    QList<StudyDecoder *> decoders = m_decoders.values();
    decoders << m_cacheDecoder;
    for (const QObject *streamer : m_decoders.keys())
        disconnect(streamer, nullptr, this, nullptr);  // the streams go after this body too (its children)
    for (StudyDecoder *d : std::as_const(decoders)) {
        if (!d)
            continue;
        disconnect(d, nullptr, this, nullptr);
        for (SeriesPane *p : std::as_const(m_panes))
            disconnect(d, nullptr, p, nullptr);
        d->forget(this);  // the thumbnails it asked for
    }
    qDeleteAll(m_panes);  // while the study they point at is still here
    m_panes.clear();
}

void StudyViewer::retire(const QSet<QString> &forgotten)
{
    for (StudyDecoder *d : std::as_const(m_decoders))
        d->retire(forgotten);
    if (m_cacheDecoder)
        m_cacheDecoder->retire(forgotten);
}

StudyDecoder *StudyViewer::decoderFor(StudyStreamer *streamer)
{
    if (!streamer) {
        if (!m_cacheDecoder)
            m_cacheDecoder = new StudyDecoder(m_store, m_images, nullptr, this);
        return m_cacheDecoder;
    }
    if (StudyDecoder *known = m_decoders.value(streamer))
        return known;
    // The viewer's, as its panes are: a pane never outlives its decoder (a prior's stream may go before its panes).
    auto *decoder = new StudyDecoder(m_store, m_images, streamer, this);
    m_decoders.insert(streamer, decoder);
    connect(streamer, &QObject::destroyed, this, [this, streamer] { m_decoders.remove(streamer); });
    return decoder;
}

void StudyViewer::wireStreamer(StudyStreamer *streamer)
{
    // The panes hear the study's instances from its decoder (decoderFor), which alone decodes them. The viewer hears
    // what the rest of it needs: the thumbnails, the findings and masks kept in the study, the volume in MPR.
    // Keys are SOP Instance UIDs: each picks out its own, whichever study they are of.
    decoderFor(streamer);
    connect(streamer, &StudyStreamer::instanceUpdated, this, [this](const InstanceUpdate &u) {
        switch (u.step) {
        case InstanceUpdate::Arriving:
            return;  // shown while it arrives by the decoder's panes
        case InstanceUpdate::Whole:
            if (m_mprVolume)
                m_mprVolume->onInstanceBytes(u.key, u.bytes);  // before the listing: the volume laid out as slices come
            return;
        case InstanceUpdate::Stored:
            if (m_mprVolume)
                m_mprVolume->onInstanceBytes(u.key, ByteView());  // one that came as a file (DIMSE): read from the cache
            return;
        case InstanceUpdate::Kept:
            onInstanceCached(u.key);
            if (m_mprVolume)
                m_mprVolume->onInstanceCached(u.key);  // a slice of the volume in MPR, filled in as it comes
            return;
        case InstanceUpdate::Failed:
            if (m_mprVolume)
                m_mprVolume->onInstanceFailed(u.key, u.error.message());
            Q_EMIT errorOccurred(u.error);
            return;
        }
    });
}

SeriesPane *StudyViewer::addPane(int seriesIndex)
{
    SeriesPane *pane = makePane(&m_study, m_streamer);
    m_panes << pane;
    layoutPanes();
    if (seriesIndex >= 0)
        pane->showSeries(seriesIndex);
    return pane;
}

void StudyViewer::layoutPanes()
{
    if (m_maximised)
        setMaximised(nullptr);  // a new layout shows all its panes (those in the grid: a new one has no parent yet)
    for (SeriesPane *p : std::as_const(m_panes))
        m_grid->removeWidget(p);
    const int columns = std::max(1, m_columns);
    for (int i = 0; i < m_panes.size(); ++i)
        m_grid->addWidget(m_panes[i], i / columns, i % columns);
}

SeriesPane *StudyViewer::makePane(const StudySummary *study, StudyStreamer *streamer)
{
    auto *pane = new SeriesPane(decoderFor(streamer), m_images, study);
    if (m_placing)
        pane->holdLoads();
    m_settings->applyTo(pane);
    pane->viewport()->findingsLayer()->setModel(m_findings);
    connect(pane, &SeriesPane::activated, this, [this, pane] { setActivePane(pane); });
    connect(pane, &SeriesPane::sliceChanged, this, [this] {
        // (A layout of the study as it streams renumbers the pane's place, not the image it is on.)
        if (!m_movedOff && !m_relocating && !m_openedAt.second.isEmpty() && panePlaces() != QList<std::pair<QString, QString>>{m_openedAt})
            m_movedOff = true;
    });
    connect(pane, &SeriesPane::frameShown, this, [this] { m_movedOff = true; });  // the reader went through the frames
    connect(pane, &SeriesPane::seriesDropped, this, [this, pane](int series) {
        setActivePane(pane);
        showSeries(series);
    });
    connect(pane, &SeriesPane::otherStudySeriesDropped, this, [this, pane](const QString &key, int series) { showSeriesOf(pane, key, series); });
    connect(pane, &SeriesPane::steppedAlone, this, [this, pane](bool moved) { m_links->m_adjusting = moved ? pane : nullptr; });
    connect(pane->viewport(), &ImageViewport::crosshairPicked, this, [this, pane](QPointF at) { m_links->crosshairAt(pane, at); });
    connect(pane->viewport(), &ImageViewport::doubleClicked, this, [this, pane] { setMaximised(m_maximised == pane ? nullptr : pane); });
    connect(pane->viewport(), &ImageViewport::menuRequested, this, [this, pane](QPoint at) {
        setActivePane(pane);
        Q_EMIT paneMenuRequested(at);
    });
    connect(pane, &SeriesPane::imageShown, this, [this] { m_links->updateReferences(); });
    connect(pane, &SeriesPane::frameShown, this, [this] { m_links->updateReferences(); });
    connect(pane->viewport(), &ImageViewport::windowChanged, this, [this, pane] {
        if (pane == m_active)
            m_links->propagateWindow();
    });
    connect(pane->viewport(), &ImageViewport::viewChanged, this, [this, pane] {
        if (pane == m_active)
            m_links->propagateZoom();
    });
    connect(pane, &SeriesPane::errorOccurred, this, &StudyViewer::errorOccurred);
    connect(pane, &SeriesPane::imageShown, this, [this, pane](int index) {
        if (m_thumbnailsWaiting && std::all_of(m_panes.begin(), m_panes.end(), [](SeriesPane *p) { return p->seriesIndex() < 0 || p->viewport()->hasImage(); }))
            startThumbnails();
        if (pane == m_links->m_adjusting) {
            m_links->m_adjusting = nullptr;  // scrolled alone: the others stay, and the offset is learned from where it is
            m_links->learnOffset(pane);
        }
        if (pane != m_active)
            return;
        Q_EMIT imageShown(index);
        m_links->follow();
    });
    connect(pane, &SeriesPane::frameShown, this, [this, pane] {
        updateMasks(pane);
        if (pane == m_links->m_adjusting) {
            m_links->m_adjusting = nullptr;  // stepped alone through its frames: the offset from where it is now
            return m_links->learnOffset(pane);
        }
        if (pane == m_active)
            m_links->follow();  // a frame of an enhanced stack lies elsewhere in the patient
    });
    connect(pane, &SeriesPane::imageShown, this, [this, pane] { updateMasks(pane); });
    // A slice's place learned (this pane's or, once shown, the active one's): the estimate gets better.
    connect(pane, &SeriesPane::sliceGeometryLearned, this, [this] { m_links->follow(); });
    connect(pane, &SeriesPane::sliceChanged, this, [this, pane](int series, int index) {
        if (pane != m_active)
            return;
        if (StudyStreamer *s = m_comparison->streamerOf(pane); s && !(pane->study() == &m_study && isKeyImageSeries(m_study, series)))
            s->setFocus(series, index);  // fetched next, then its neighbours (a key image series is the study's own images)
    });
    connect(pane, &SeriesPane::previewShown, this, [this, pane](int index, double fraction) {
        if (pane == m_active)
            Q_EMIT previewShown(index, fraction);
    });
    return pane;
}

void StudyViewer::setGrid(int rows, int columns)
{
    resizeGrid(rows, columns, true);
}

void StudyViewer::resizeGrid(int rows, int columns, bool fill)
{
    m_rows = std::clamp(rows, 1, 4);
    m_columns = std::clamp(columns, 1, 4);
    const int wanted = m_rows * m_columns;
    while (m_panes.size() > wanted) {
        SeriesPane *gone = m_panes.takeLast();
        if (gone == m_active)
            m_active = m_panes.first();
        m_links->forget(gone);
        m_grid->removeWidget(gone);
        disconnect(m_images, nullptr, gone, nullptr);
        delete gone;
    }
    while (m_panes.size() < wanted) {
        // The first series of images not on screen yet (a report or key object list is no picture); else the
        // active pane's.
        int series = m_active ? m_active->seriesIndex() : 0;
        for (int s = 0; s < m_study.series.size(); ++s) {
            if (!isDocumentSeries(m_study.series[s])
                && std::none_of(m_panes.begin(), m_panes.end(), [s](SeriesPane *p) { return p->seriesIndex() == s; })) {
                series = s;
                break;
            }
        }
        addPane(fill ? series : -1);
    }
    layoutPanes();
    m_comparison->updateLabels();
    setActivePane(m_active);
}

bool StudyViewer::setStudy(const StudySummary &study)
{
    if (study.identity.studyInstanceUid != m_study.identity.studyInstanceUid || study.identity.patientId != m_study.identity.patientId) {
        Q_EMIT errorOccurred(Error(ErrorCode::Corrupt, tr("the archive lists study %1 under patient ID '%2', not '%3' as its first answer said: "
                                                          "not shown").arg(study.identity.studyInstanceUid, study.identity.patientId,
                                                                           m_study.identity.patientId)));
        for (SeriesPane *p : m_panes)
            p->viewport()->clear(tr("The archive's answers about this study disagree on the patient: not shown."));
        return false;
    }
    const QList<std::pair<QString, QString>> shown = panePlaces();
    // The thumbnails made stay with their series (a study laid out as it arrives is laid out again and again).
    QHash<QString, QImage> made;
    for (auto it = m_thumbnails.cbegin(); it != m_thumbnails.cend(); ++it)
        if (it.key() < m_study.series.size())
            made.insert(m_study.series[it.key()].seriesInstanceUid, it.value());
    ++m_studyGeneration;  // thumbnails being made are for the old numbering
    m_study = study;
    applyKeySeries();
    m_thumbnails.clear();
    m_thumbnailsAsked.clear();
    m_thumbnailWaiting.clear();
    for (int i = 0; i < m_study.series.size(); ++i) {
        if (const auto it = made.constFind(m_study.series[i].seriesInstanceUid); it != made.cend()) {
            m_thumbnails.insert(i, it.value());
            m_thumbnailsAsked.insert(i);
        }
    }
    fillSeriesList();
    relocatePanes(shown, true);
    if (!m_thumbnailsWaiting)
        requestThumbnails();
    m_segmentations->setStudy(m_study);
    m_findingsLoader->setStudy(m_study);
    setActivePane(m_active);  // the list's row, and the streamer's focus, in the new numbering
    m_links->follow();                 // the places the listing brought
    if (m_mpr && !m_study.partial) {  // (laid out as it arrives: the volume goes on filling as it is)
        m_mpr->setSexDisagreement(m_study.sexDisagreement);  // what the whole study's images now say
        // The listing says what the series is: the volume laid out for good on it, what has come kept. (A series
        // the listing no longer has: MPR of the active pane's series again.)
        const QString uid = m_mprVolume->series().seriesInstanceUid;
        const auto listed = std::find_if(m_study.series.cbegin(), m_study.series.cend(), [&](const SeriesSummary &s) { return s.seriesInstanceUid == uid; });
        if (listed != m_study.series.cend()) {
            m_mprVolume->relist(*listed);
        } else {
            setMprShown(false);
            setMprShown(true);
        }
    }
    return true;
}

bool StudyViewer::isAsOpened() const
{
    return !m_movedOff && m_panes.size() == 1 && m_comparison->count() == 0 && !isMprByReader();
}

QList<std::pair<QString, QString>> StudyViewer::panePlaces() const
{
    QList<std::pair<QString, QString>> shown;  // (panes showing a prior keep to it: their study's list does not change)
    for (SeriesPane *p : m_panes) {
        const int s = p->seriesIndex(), k = p->sliceIndex();
        const bool here = p->study() == &m_study && s >= 0 && s < m_study.series.size() && k >= 0 && k < m_study.series[s].instances.size();
        shown << (here ? std::make_pair(m_study.series[s].seriesInstanceUid, m_study.series[s].instances[k].key) : std::make_pair(QString(), QString()));
    }
    return shown;
}

void StudyViewer::relocatePanes(const QList<std::pair<QString, QString>> &shown, bool always)
{
    // Each pane to its image: in its series if that is still listed, else in the first series that has it.
    auto find = [this](const std::pair<QString, QString> &place, bool sameSeries, int &series, int &slice) {
        for (int s = 0; s < m_study.series.size(); ++s) {
            if (sameSeries && m_study.series[s].seriesInstanceUid != place.first)
                continue;
            for (int k = 0; k < m_study.series[s].instances.size(); ++k)
                if (m_study.series[s].instances[k].key == place.second) {
                    series = s;
                    slice = k;
                    return true;
                }
        }
        return false;
    };
    const bool relocating = std::exchange(m_relocating, true);  // (not the reader's moves: isAsOpened())
    for (int i = 0; i < m_panes.size() && i < shown.size(); ++i) {
        if (m_panes[i]->study() != &m_study)
            continue;
        int series = m_study.series.isEmpty() ? -1 : 0, slice = -1;
        if (!shown[i].second.isEmpty() && !find(shown[i], true, series, slice))
            find(shown[i], false, series, slice);
        if (always || series != m_panes[i]->seriesIndex() || slice != m_panes[i]->sliceIndex())
            m_panes[i]->relocate(series, slice);
    }
    m_relocating = relocating;
    // An image the viewer opened on that a new layout no longer has (another patient's, dropped as damaged): where
    // the pane went instead is where it opened, as far as the reader's moves go.
    if (!m_movedOff && m_panes.size() == 1)
        m_openedAt = panePlaces().value(0);
}

void StudyViewer::setMaximised(SeriesPane *pane)
{
    if (pane && (m_panes.size() < 2 || !m_panes.contains(pane)))
        pane = nullptr;
    m_maximised = pane;
    for (SeriesPane *p : std::as_const(m_panes))
        if (p->parentWidget())  // in the grid (a pane being made has no parent: shown, it would be a window of its own)
            p->setVisible(!pane || p == pane);
    if (pane)
        setActivePane(pane);
}

void StudyViewer::setActivePane(SeriesPane *pane)
{
    if (!pane)
        return;
    const bool changed = pane != m_active;
    m_active = pane;
    for (SeriesPane *p : m_panes)
        p->setActive(m_panes.size() > 1 && p == pane);
    setFocusProxy(pane);
    // The series list is the current study's: it marks the active pane's series when it is one of them.
    const int row = m_active->study() == &m_study ? m_active->seriesIndex() : -1;
    if (m_seriesList->currentRow() != row) {
        const QSignalBlocker block(m_seriesList);
        m_seriesList->setCurrentRow(row);
    }
    if (StudyStreamer *s = m_comparison->streamerOf(m_active); s && m_active->seriesIndex() >= 0)
        s->setFocus(m_active->seriesIndex(), m_active->sliceIndex());
    updateModeText();
    m_links->updateReferences();
    if (changed)
        Q_EMIT activePaneChanged(pane);
}

void StudyViewer::showSeries(int seriesIndex)
{
    if (seriesIndex < 0 || seriesIndex >= m_study.series.size())
        return;
    if (isDocumentSeries(m_study.series[seriesIndex])) {
        // Not images: the pane keeps what it shows; the findings say what the document holds.
        const QSignalBlocker block(m_seriesList);
        m_seriesList->setCurrentRow(m_active->study() == &m_study ? m_active->seriesIndex() : -1);
        Q_EMIT findingsRequested();
        return;
    }
    if (m_active->study() != &m_study)  // the pane showed a prior: it shows the current study again
        return void(showSeriesOf(m_active, keyOf(&m_study), seriesIndex));
    m_active->showSeries(seriesIndex);
    if (m_seriesList->currentRow() != seriesIndex) {
        const QSignalBlocker block(m_seriesList);
        m_seriesList->setCurrentRow(seriesIndex);
    }
}

void StudyViewer::showSlice(int index)
{
    m_active->showSlice(index);  // the streamer hears of it through sliceChanged
}

void StudyViewer::updateMasks(SeriesPane *pane)
{
    ImageViewport *vp = pane->viewport();
    vp->layers()->setMasksVisible(m_settings->segmentationsVisible());
    vp->layers()->setMasks(vp->hasImage() ? m_segmentations->masksFor(vp->image().info) : QList<ViewportMask>());
}

void StudyViewer::onInstanceCached(const QString &key)
{
    for (int s = 0; s < m_study.series.size(); ++s) {  // the first image of a series to arrive gives its thumbnail
        if (m_thumbnailsAsked.contains(s))
            continue;
        for (const InstanceRef &r : m_study.series[s].instances) {
            if (r.key == key) {
                requestThumbnail(s, key);
                break;
            }
        }
    }
    m_segmentations->instanceCached(key);
    m_findingsLoader->instanceCached(key);
}

void StudyViewer::updateModeText()
{
    for (SeriesPane *p : m_panes) {
        QStringList modes;
        if (m_links->isSynchronized() && m_panes.size() > 1) {
            const double offset = p->study() != &m_study ? m_links->offsetMm(keyOf(p->study())) : 0.0;
            modes << (std::abs(offset) >= 0.05 ? tr("Linked ⇅ offset %1 mm").arg(offset, 0, 'f', 1) : tr("Linked ⇅"));
            if (m_links->isBeyond(p))
                modes << tr("⚠ no slice at the linked level");
        }
        if (m_links->isWindowLinked() && m_panes.size() > 1)
            modes << tr("W/L linked");
        if (m_links->isZoomLinked() && m_panes.size() > 1)
            modes << tr("Zoom linked");
        if (p == m_active && m_cine->isPlaying()) {
            bool acquired = false;
            const double fps = m_cine->framesPerSecond(&acquired);
            modes << (acquired ? tr("Cine %1 fps (acquired)").arg(fps, 0, 'f', fps < 10 ? 1 : 0) : tr("Cine %1 fps").arg(fps, 0, 'f', 0));
        }
        p->viewport()->layers()->setModeText(modes.join(QStringLiteral("  ")));
    }
}

void StudyViewer::stepSlice(int step)
{
    m_active->stepSlice(step);
}

void StudyViewer::showStackEnd(bool last)
{
    // A new image opens at its first frame by itself (or its last, asked); the one on screen is moved there.
    const int target = last ? sliceCount() - 1 : 0;
    const bool same = m_active->sliceIndex() == target;
    m_active->showSlice(target, last);
    if (!last && same)
        m_active->showFrame(0);
}

void StudyViewer::keyPressEvent(QKeyEvent *event)
{
    switch (event->key()) {
    case Qt::Key_Up:
    case Qt::Key_Left: stepSlice(-1); break;
    case Qt::Key_Down:
    case Qt::Key_Right: stepSlice(1); break;
    case Qt::Key_PageUp: stepSlice(-10); break;
    case Qt::Key_PageDown: stepSlice(10); break;
    case Qt::Key_Home: showStackEnd(false); break;
    case Qt::Key_End: showStackEnd(true); break;
    default: QWidget::keyPressEvent(event); return;
    }
    event->accept();
}

} // namespace spectrum

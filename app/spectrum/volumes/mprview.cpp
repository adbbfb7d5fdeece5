// SPDX-License-Identifier: Apache-2.0
#include "volumes/mprview.h"

#include "viewport/displayimage.h"

#include "spectrum/core/job.h"
#include "spectrum/core/threadpools.h"
#include "spectrum/imaging/volumes/planegeometry.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QPushButton>
#include <QShortcut>
#include <QVBoxLayout>

#include <cmath>

namespace spectrum {

using namespace vec;

namespace {


/// `v` turned by `radians` about the unit axis `k` (Rodrigues).
Vector3 turned(const Vector3 &v, const Vector3 &k, double radians)
{
    const double c = std::cos(radians), s = std::sin(radians), d = dot(k, v);
    const Vector3 kv = cross(k, v);
    return {v[0] * c + kv[0] * s + k[0] * d * (1 - c), v[1] * c + kv[1] * s + k[1] * d * (1 - c), v[2] * c + kv[2] * s + k[2] * d * (1 - c)};
}

/// The key findings drawn on a plane are kept under: the series and the plane's very place and directions.
QString planeKey(const QString &seriesUid, const ImageInfo &info)
{
    return QStringLiteral("mpr:%1:%2,%3,%4:%5,%6,%7,%8,%9,%10")
        .arg(seriesUid)
        .arg(info.imagePosition[0], 0, 'f', 2).arg(info.imagePosition[1], 0, 'f', 2).arg(info.imagePosition[2], 0, 'f', 2)
        .arg(info.imageOrientation[0], 0, 'f', 4).arg(info.imageOrientation[1], 0, 'f', 4).arg(info.imageOrientation[2], 0, 'f', 4)
        .arg(info.imageOrientation[3], 0, 'f', 4).arg(info.imageOrientation[4], 0, 'f', 4).arg(info.imageOrientation[5], 0, 'f', 4);
}

/// The window over the values a plane holds (its padding, where it has no value, left out).
VoiWindow presentRange(const ReformattedImage &r)
{
    double lo = 1e300, hi = -1e300;
    for (int y = 0; y < r.pixels.height(); ++y)
        for (int x = 0; x < r.pixels.width(); ++x)
            if (r.isPresent(x, y)) {
                const double v = r.info.toModalityValue(r.pixels.valueAt(x, y));
                lo = std::min(lo, v), hi = std::max(hi, v);
            }
    return lo > hi ? VoiWindow{0, 1} : VoiWindow{(lo + hi) / 2, std::max(1.0, hi - lo)};
}

const PlaneOrientation kOrientations[MprView::kPanes] = {PlaneOrientation::Axial, PlaneOrientation::Coronal, PlaneOrientation::Sagittal};

} // namespace

MprView::MprView(MprVolume *volume, QWidget *parent)
    : QWidget(parent), m_volume(volume), m_status(new QLabel), m_modeBox(new QComboBox), m_thicknessBox(new QDoubleSpinBox), m_samplingBox(new QComboBox)
{
    setObjectName(QStringLiteral("mprView"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    // The controls: the slab, the sampling, turning the crosshair, and what the volume holds.
    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(6, 2, 6, 2);
    bar->addWidget(new QLabel(tr("MPR")));
    m_modeBox->setObjectName(QStringLiteral("mprSlabMode"));
    m_modeBox->addItems({tr("Thin"), tr("MIP"), tr("MinIP"), tr("Average")});
    m_modeBox->setToolTip(tr("Slab projection across the thickness"));
    bar->addWidget(m_modeBox);
    m_thicknessBox->setObjectName(QStringLiteral("mprSlabThickness"));
    m_thicknessBox->setRange(0, 200);
    m_thicknessBox->setDecimals(1);
    m_thicknessBox->setSingleStep(1);
    m_thicknessBox->setSuffix(tr(" mm"));
    m_thicknessBox->setValue(10);
    m_thicknessBox->setToolTip(tr("Slab thickness"));
    bar->addWidget(m_thicknessBox);
    m_samplingBox->setObjectName(QStringLiteral("mprSampling"));
    m_samplingBox->addItems({tr("Trilinear"), tr("Nearest")});
    m_samplingBox->setToolTip(tr("How oblique planes are sampled (standard planes show the voxels as acquired)"));
    bar->addWidget(m_samplingBox);
    auto *left = new QPushButton(tr("⟲"));
    auto *right = new QPushButton(tr("⟳"));
    auto *reset = new QPushButton(tr("Reset"));
    left->setToolTip(tr("Turn the crosshair of the active pane 5° anticlockwise (,)"));
    right->setToolTip(tr("Turn the crosshair of the active pane 5° clockwise (.)"));
    reset->setToolTip(tr("Axial, coronal and sagittal again"));
    for (QPushButton *b : {left, right, reset}) {
        b->setFocusPolicy(Qt::NoFocus);
        bar->addWidget(b);
    }
    m_status->setObjectName(QStringLiteral("mprStatus"));
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bar->addWidget(m_status, 1);
    layout->addLayout(bar);
    auto *row = new QHBoxLayout;
    row->setSpacing(2);
    const QString names[kPanes] = {tr("axial"), tr("coronal"), tr("sagittal")};
    for (int k = 0; k < kPanes; ++k) {
        Pane &p = m_panes[size_t(k)];
        p.viewport = new ImageViewport;
        p.viewport->setObjectName(QStringLiteral("mprPane%1").arg(k));
        p.viewport->setTool(ViewportTool::crosshair());
        p.viewport->clear(tr("Laying out the volume…"));
        p.viewport->installEventFilter(this);
        p.name = names[k];
        row->addWidget(p.viewport, 1);
        connect(p.viewport, &ImageViewport::crosshairPicked, this, [this, k](QPointF at) {
            setActivePane(k);
            const ImageViewport *vp = m_panes[size_t(k)].viewport;
            if (!vp->hasImage())
                return;
            if (const std::optional<PatientPoint> p = patientPointAt(vp->image().info, at))
                setPoint(*p);
        });
        connect(p.viewport, &ImageViewport::sliceStepRequested, this, [this, k](int steps, bool) { step(k, steps); });
        connect(p.viewport, &ImageViewport::windowChanged, this, [this, k](const VoiWindow &w) {
            if (m_syncingWindow)
                return;
            m_syncingWindow = true;  // one window for the three: the same series, the same values
            for (int j = 0; j < kPanes; ++j)
                if (j != k && m_panes[size_t(j)].viewport->hasImage())
                    m_panes[size_t(j)].viewport->setWindow(w);
            m_syncingWindow = false;
        });
    }
    layout->addLayout(row, 1);

    auto applySlab = [this] {
        const int i = m_modeBox->currentIndex();
        setSlab(i == 0 ? 0 : m_thicknessBox->value(), i == 1 ? SlabMode::Mip : i == 2 ? SlabMode::MinIp : SlabMode::Average);
    };
    connect(m_modeBox, &QComboBox::currentIndexChanged, this, applySlab);
    connect(m_thicknessBox, &QDoubleSpinBox::valueChanged, this, [this, applySlab] {
        if (m_modeBox->currentIndex() != 0)
            applySlab();
    });
    connect(m_samplingBox, &QComboBox::currentIndexChanged, this,
            [this](int i) { setInterpolation(i == 0 ? Interpolation::Trilinear : Interpolation::Nearest); });
    connect(left, &QPushButton::clicked, this, [this] { rotate(m_active, -5); });
    connect(right, &QPushButton::clicked, this, [this] { rotate(m_active, 5); });
    connect(reset, &QPushButton::clicked, this, &MprView::resetOrientation);
    auto *turnLeft = new QShortcut(QKeySequence(Qt::Key_Comma), this, [this] { rotate(m_active, -5); });
    auto *turnRight = new QShortcut(QKeySequence(Qt::Key_Period), this, [this] { rotate(m_active, 5); });
    turnLeft->setContext(Qt::WidgetWithChildrenShortcut);
    turnRight->setContext(Qt::WidgetWithChildrenShortcut);

    connect(m_volume, &MprVolume::ready, this, &MprView::onReady);
    connect(m_volume, &MprVolume::filled, this, &MprView::cutAll);
    connect(m_volume, &MprVolume::waiting, this, [this](const QString &why) {
        for (Pane &p : m_panes) {
            p.viewport->clear(tr("Laying out the volume as the series arrives: %1").arg(why));
            p.shown = false;
        }
        updateStatus();
    });
    connect(m_volume, &MprVolume::refused, this, [this](const QString &why) {
        for (Pane &p : m_panes)
            p.viewport->clear(tr("No MPR of this series: %1").arg(why));
        m_status->setText(tr("No MPR: %1").arg(why));
        emit refused(why);
    });
    if (m_volume->volume())
        onReady();
    setActivePane(0);
}

MprView::~MprView() = default;

void MprView::onReady()
{
    if (!m_volume->volume())
        return;
    if (m_laidOut) {
        // Laid out again (more of the series came, or its listing): the same point and planes, cut anew.
        cutAll();
        updateStatus();
        return;
    }
    m_laidOut = true;
    // At the slice the pane showed, else the volume's centre.
    const VolumeGeometry &g = m_volume->volume()->geometry();
    m_point = m_volume->focusPoint().value_or(g.patientPoint((g.columns - 1) / 2.0, (g.rows - 1) / 2.0, (g.slotCount - 1) / 2.0));
    resetOrientation();
}

void MprView::resetOrientation()
{
    if (!m_volume->volume())
        return;
    const VolumeGeometry &g = m_volume->volume()->geometry();
    for (int k = 0; k < kPanes; ++k) {
        const ReformatPlane p = standardPlane(g, kOrientations[k], m_point);
        m_panes[size_t(k)].row = p.rowDirection;
        m_panes[size_t(k)].column = p.columnDirection;
    }
    cutAll();
}

ReformatPlane MprView::plane(int pane) const
{
    if (!m_volume->volume())
        return {};
    const VolumeGeometry &g = m_volume->volume()->geometry();
    const Pane &q = m_panes[size_t(pane)];
    ReformatPlane p = standardPlane(g, kOrientations[pane], m_point);
    if (dot(p.rowDirection, q.row) < 1 - 1e-9 || dot(p.columnDirection, q.column) < 1 - 1e-9) {  // turned: oblique
        p = planeThrough(g, m_point, q.row, q.column);
        p.name = tr("oblique (%1)").arg(q.name);
    }
    p.slabThickness = m_slab;
    p.slabMode = m_mode;
    p.interpolation = m_interpolation;
    return p;
}

void MprView::setPoint(const Vector3 &point)
{
    m_point = point;
    cutAll();
}

void MprView::rotate(int pane, double degrees)
{
    if (!m_volume->volume() || pane < 0 || pane >= kPanes)
        return;
    // Clockwise on screen is about the normal pointing into the screen (row × column).
    const Pane &about = m_panes[size_t(pane)];
    const Vector3 axis = cross(about.row, about.column);
    const double radians = degrees * M_PI / 180.0;
    for (int k = 0; k < kPanes; ++k) {
        if (k == pane)
            continue;
        m_panes[size_t(k)].row = turned(m_panes[size_t(k)].row, axis, radians);
        m_panes[size_t(k)].column = turned(m_panes[size_t(k)].column, axis, radians);
        cut(k);
    }
    updateLines();
}

void MprView::setSlab(double thicknessMm, SlabMode mode)
{
    m_slab = std::max(0.0, thicknessMm);
    m_mode = mode;
    const QSignalBlocker b1(m_modeBox), b2(m_thicknessBox);
    m_modeBox->setCurrentIndex(m_slab <= 0 ? 0 : mode == SlabMode::Mip ? 1 : mode == SlabMode::MinIp ? 2 : 3);
    if (m_slab > 0)
        m_thicknessBox->setValue(m_slab);
    cutAll();
}

void MprView::setInterpolation(Interpolation interpolation)
{
    m_interpolation = interpolation;
    const QSignalBlocker b(m_samplingBox);
    m_samplingBox->setCurrentIndex(interpolation == Interpolation::Trilinear ? 0 : 1);
    cutAll();
}

void MprView::setActivePane(int pane)
{
    m_active = std::clamp(pane, 0, kPanes - 1);
    for (int k = 0; k < kPanes; ++k)
        m_panes[size_t(k)].viewport->setStyleSheet(k == m_active ? QStringLiteral("border: 1px solid #3a7bd5") : QString());
}

int MprView::cutsPending() const
{
    int n = 0;
    for (const Pane &p : m_panes)
        n += (p.cutting ? 1 : 0) + (p.again ? 1 : 0);
    return n;
}

void MprView::step(int pane, int steps)
{
    if (!m_volume->volume())
        return;
    setActivePane(pane);
    // One voxel along the normal: the slot spacing for the acquired plane, the finest spacing for the others.
    const ReformatPlane p = plane(pane);
    const Vector3 n = p.normal();
    const VolumeGeometry &g = m_volume->volume()->geometry();
    double stepMm = std::min({g.spacing[0], g.spacing[1], g.spacing[2]});
    const Vector3 axes[3] = {g.rowDirection, g.columnDirection, g.normal};
    for (int k = 0; k < 3; ++k)
        if (std::abs(dot(n, axes[k])) > 1 - 1e-6)
            stepMm = g.spacing[size_t(k)];
    Vector3 next = m_point;
    for (int k = 0; k < 3; ++k)
        next[size_t(k)] += n[size_t(k)] * stepMm * steps;
    m_point = next;
    cut(pane);
    updateLines();
}

void MprView::cutAll()
{
    if (!m_volume->volume())
        return;
    for (int k = 0; k < kPanes; ++k)
        cut(k);
    updateLines();
}

void MprView::cut(int pane)
{
    if (!m_volume->volume())
        return;
    Pane &p = m_panes[size_t(pane)];
    if (p.cutting) {
        p.again = true;  // the latest plane once this cut is done
        return;
    }
    p.cutting = true;
    std::shared_ptr<Volume> volume = m_volume->volume();
    const ReformatPlane plane = this->plane(pane);
    // Windowed (and shrunk to its size on screen) on the pool too: the GUI thread only takes the picture. Made with
    // the window and scale of the moment; the viewport renders again itself if either changed meanwhile.
    const std::optional<VoiWindow> window = p.shown ? std::optional<VoiWindow>(p.viewport->window()) : std::nullopt;
    const double scale = p.shown ? p.viewport->view().displayScale() : 0;
    const QString series = m_volume->series().seriesInstanceUid;
    struct Cut
    {
        ReformattedImage image;
        PrerenderedFrame frame;
    };
    runOnPool<Cut>(computePool(), this, [volume, plane, window, scale, series] {
        Cut c;
        c.image = reformat(*volume, plane);
        if (window) {
            const ImageInfo &info = c.image.info;
            c.frame = prerenderFirstFrame(DecodedImage{info, c.image.pixels}, planeKey(series, info), window);
            // As ImageViewport::imageAsPainted() averages it: along the axes that shrink on screen (with thick
            // slices, the slice direction is often magnified while the other shrinks).
            const QSize onScreen(std::max(1, int(std::lround(info.columns * scale))), std::max(1, int(std::lround(info.rows * scale * info.pixelAspect()))));
            if (averagedSize(c.frame.rendered.size(), onScreen) != c.frame.rendered.size())
                c.frame.shrunk = shrinkByAreaAverage(c.frame.rendered, onScreen);
        }
        return c;
    },
                   [this, pane, volume](Cut &&c) {
                       Pane &q = m_panes[size_t(pane)];
                       q.cutting = false;
                       if (volume != m_volume->volume()) {
                           // Cut from a volume since laid out again, or given up (not one stack, refused): never shown.
                           if (std::exchange(q.again, false) || m_volume->volume())
                               cut(pane);
                           return;
                       }
                       if (!c.frame.rendered.isNull())
                           q.viewport->showNextRendered(std::move(c.frame));
                       showPlane(pane, std::move(c.image));
                       if (std::exchange(q.again, false))
                           cut(pane);
                   },
                   1);  // ahead of the slices queued for decoding: the reader sees what is in now
}

void MprView::showPlane(int pane, ReformattedImage image)
{
    Pane &p = m_panes[size_t(pane)];
    ImageViewport *vp = p.viewport;
    const bool first = !p.shown;
    // Findings drawn on a plane belong to that very plane (its place and directions), never to the next one.
    const ImageInfo &info = image.info;
    const QString key = planeKey(m_volume->series().seriesInstanceUid, info);
    if (!m_windowSet) {
        // The series' own window, the same in the three panes.
        m_windowSet = true;
        const VoiWindow w = info.windows.isEmpty() ? presentRange(image) : VoiWindow{info.windows.first().center, info.windows.first().width};
        for (Pane &q : m_panes)
            q.viewport->showNextWith(w);
    }
    // A plane of another size (the volume laid out again as its series came) is fitted anew.
    const bool resized = !first && vp->hasImage() && (vp->image().info.columns != info.columns || vp->image().info.rows != info.rows);
    vp->setImage(DecodedImage{info, image.pixels}, !first && !resized, key);
    if (first || resized)
        vp->setView(vp->view().fitted());
    p.shown = true;
    QStringList why;
    if (image.absentPixels[int(PixelAbsence::Gap)] > 0)
        why << tr("missing slices");
    if (image.absentPixels[int(PixelAbsence::Arriving)] > 0)
        why << tr("slices still arriving");
    if (image.absentPixels[int(PixelAbsence::Outside)] > 0)
        why << tr("outside the volume");
    vp->setNoValue(image.absence, why.join(tr(", ")));
    // The badge says how much of the plane is in while slices arrive (never "complete" over arriving pixels).
    const qint64 inside = qint64(info.columns) * info.rows - image.absentPixels[int(PixelAbsence::Outside)];
    const int arriving = image.absentPixels[int(PixelAbsence::Arriving)];
    vp->layers()->setCompleteness(arriving > 0 && inside > 0 ? std::min(0.999, 1.0 - double(arriving) / double(inside)) : 1.0);
    ViewportOverlay o;
    const DicomIdentity &id = info.identity;
    o.topLeft = tr("%1\nID %2\n%3  %4").arg(DicomIdentity::displayName(id.patientName), id.patientId, DicomIdentity::displayDate(id.patientBirthDate), id.patientSex);
    if (!m_sexDisagreement.isEmpty())
        o.topLeft += tr("\n⚠ sex differs: %1").arg(m_sexDisagreement);
    o.topRight = tr("%1\n%2\n%3 %4\nMPR %5").arg(id.studyDescription, DicomIdentity::displayDate(id.studyDate), id.modality, id.seriesDescription, image.description);
    o.bottomLeft = info.sliceThickness > 0 ? tr("Slab %1 mm").arg(info.sliceThickness, 0, 'g', 3) : QString();
    if (image.absentPixels[int(PixelAbsence::Gap)] > 0)
        o.bottomLeft += tr("\n⚠ hatched: missing slices");
    if (image.absentPixels[int(PixelAbsence::Arriving)] > 0)
        o.bottomLeft += tr("\nhatched: slices still arriving");
    o.bottomLeft = o.bottomLeft.trimmed();
    vp->layers()->setOverlay(o);
    updateLines();
    updateStatus();
    emit planeShown(pane);
}

void MprView::updateLines()
{
    if (!m_volume->volume())
        return;
    for (int k = 0; k < kPanes; ++k) {
        ImageViewport *vp = m_panes[size_t(k)].viewport;
        if (!vp->hasImage())
            continue;
        const ImageInfo &info = vp->image().info;
        QList<QLineF> lines;
        for (int j = 0; j < kPanes; ++j) {
            ImageViewport *other = m_panes[size_t(j)].viewport;
            if (j != k && other->hasImage())
                if (const std::optional<QLineF> line = referenceLine(info, other->image().info))
                    lines << *line;
        }
        vp->layers()->setReferenceLines(lines);
        // The crosshair on the plane through it: a standard plane lies on the voxel centre nearest to the point,
        // up to half a voxel away.
        double distance = 0;
        const std::optional<QPointF> at = imagePointOf(info, m_point, &distance);
        const Vector3 &spacing = m_volume->volume()->geometry().spacing;
        vp->layers()->setCrosshair(at && std::abs(distance) <= std::max({spacing[0], spacing[1], spacing[2]}) / 2 + 1e-3 ? at : std::nullopt);
    }
}

void MprView::updateStatus()
{
    m_status->setText(statusText());
}

QString MprView::statusText() const
{
    const std::shared_ptr<Volume> v = m_volume->volume();
    if (!v) {
        if (!m_volume->refusal().isEmpty())
            return tr("No MPR: %1").arg(m_volume->refusal());
        return m_volume->waitingFor().isEmpty() ? tr("laying out the volume…") : tr("laying out the volume: %1").arg(m_volume->waitingFor());
    }
    QStringList parts;
    parts << tr("%1 × %2 × %3 voxels, %4 × %5 × %6 mm").arg(v->columns()).arg(v->rows()).arg(v->slotCount())
                 .arg(v->geometry().spacing[0], 0, 'g', 3).arg(v->geometry().spacing[1], 0, 'g', 3).arg(v->geometry().spacing[2], 0, 'g', 3);
    const std::vector<SlotState> states = v->slotStates();
    const int arriving = int(std::count(states.begin(), states.end(), SlotState::Arriving));
    if (arriving > 0)
        parts << tr("%n slice(s) arriving", nullptr, arriving);
    parts << v->notes();
    return parts.join(QStringLiteral(" · "));
}

bool MprView::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::MouseButtonPress || event->type() == QEvent::Wheel || event->type() == QEvent::FocusIn)
        for (int k = 0; k < kPanes; ++k)
            if (watched == m_panes[size_t(k)].viewport)
                setActivePane(k);
    return QWidget::eventFilter(watched, event);
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#pragma once
// ImageViewport: one image on screen, with the radiologist's mouse and keys. Right-drag windows (width
// across, level up and down), the wheel steps through slices (reported, not handled here), Ctrl+wheel zooms,
// middle-drag pans; the left button does what the current tool does — pan, or draw a finding (a distance, an
// angle, a Cobb angle, a bidirectional, a region, an arrow, a text, a point: annotation.h); with any tool a
// finding's points can be dragged again, and a finding dragged by its outline moves whole. The view can be fitted,
// shown 1:1, rotated in quarter turns, flipped and inverted. The overlay shows what the study viewer sets,
// the pixel value under the cursor in modality units (HU for CT), the window, the zoom, and whether the image
// is complete or still arriving.
//
// Findings belong to the image (and frame) they were drawn on, in a FindingsModel a study's panes share: scrolling
// away and back shows them again, and a report read in shows its findings on the images they name.

#include "viewport/displayimage.h"
#include "viewport/findingslayer.h"
#include "viewport/overlaylayout.h"
#include "viewport/viewgeometry.h"
#include "viewport/viewportlayers.h"
#include "tools/viewporttool.h"

#include "spectrum/imaging/tools/measurements.h"
#include "spectrum/imaging/documents/presentationstate.h"
#include "spectrum/imaging/windowlevel.h"

#include <QColor>
#include <QHash>
#include <QImage>
#include <QTransform>
#include <QWidget>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace spectrum {

class ImageViewport : public QWidget
{
    Q_OBJECT
public:
    /// Crosshair: a click (or drag) picks a point in the patient; the linked panes go there (crosshairPicked).
    /// The drawing tools: Distance, Rectangle, Ellipse, Arrow and Bidirectional by a drag (a bidirectional's drag is
    /// its long axis; the short axis follows, perpendicular, its ends draggable); Angle by a drag (one arm) and a
    /// click (the other end); Cobb angle by two drags (its two lines); Polygon by clicks (closed by a click on its
    /// first vertex, a double-click or Enter); Freehand by tracing; Text and Point by a click. Esc cancels.
    explicit ImageViewport(QWidget *parent = nullptr);

    /// Shows `image`, known as `key` (its measurements are kept under it). Keeps the current window if
    /// `keepWindow` (scrolling a stack), else uses the image's default.
    void setImage(const DecodedImage &image, bool keepWindow, const QString &key = QString());
    /// The next setImage() shows its image with `window` (a hanging protocol's preset) rather than the kept or
    /// the image's own one: rendered once, with it, and windowChanged() emitted.
    void showNextWith(const VoiWindow &window) { m_nextWindow = window; }
    /// The next setImage() may take its pixels as rendered already (off the GUI thread) — if `frame` is of the
    /// image it shows, at the frame and with the window it shows it with; otherwise it renders them itself.
    void showNextRendered(PrerenderedFrame frame) { m_nextRendered = std::move(frame); }
    /// How many frames this viewport has windowed itself, on the GUI thread (not rendered ready on the pool).
    int framesRenderedHere() const { return m_framesRenderedHere; }
    /// Shows `shown` — `image` through filters — over the extent of `image`, which alone gives the values under
    /// the cursor, the region statistics and the geometry: a filter changes what the eye sees, never a number
    /// read off the image. `filterNote` names the filters on the overlay. `valueRows`: how many of `image`'s rows
    /// are in (while it arrives; −1: all) — no value is read from a row that is not.
    void setImage(const DecodedImage &image, const DecodedImage &shown, const QString &filterNote, bool keepWindow,
                  const QString &key, int valueRows = -1);
    /// No image: `message` instead. With `keepOverlay`, the overlay's text stays (whose study and which slice this
    /// is, while the slice is fetched or has failed); otherwise it goes too.
    void clear(const QString &message = QString(), bool keepOverlay = false);
    bool hasImage() const { return !m_image.pixels.isNull(); }
    /// What the viewport says instead of an image (clear()).
    QString message() const { return hasImage() ? QString() : m_message; }
    /// The image as decoded: its modality values and geometry are what the viewport reports.
    const DecodedImage &image() const { return m_image; }
    /// Multi-frame images: the frame on screen (0-based). image().info describes it (its position, spacing,
    /// rescale, windows); values and regions are read from it; measurements belong to it.
    void setFrame(int frame);
    int frame() const { return m_frame; }
    int frameCount() const { return hasImage() ? std::max(1, m_image.info.frames) : 0; }
    /// What is painted: the image through the filters in use, or the image itself.
    const DecodedImage &shownImage() const { return m_shown; }
    bool isFiltered() const { return !m_filterNote.isEmpty(); }
    /// Magnified images: smooth (bilinear) or pixel-exact (each image pixel a sharp square). Shrunk images are
    /// always averaged over the area each screen pixel covers, so a line one pixel wide never vanishes.
    void setSmoothMagnification(bool smooth);
    bool smoothMagnification() const { return m_smoothMagnify; }
    /// What paintEvent draws the image from at the current zoom: the rendered image itself, or (shrunk along
    /// either axis) its area average at the size it takes on screen along that axis (averagedSize()).
    QImage imageAsPainted() const;

    VoiWindow window() const { return m_window; }
    void setWindow(const VoiWindow &window);
    /// CT presets 1–5 (ctWindowPresets(): brain, lung, bone, abdomen, mediastinum), 0-based here.
    void applyPreset(int index);
    /// The window from the image's own values (autoWindow()).
    void autoWindowLevel();

    /// How the image lies in the pane: zoom, pan, quarter turns and flips over its extent (viewgeometry.h) — what
    /// maps image coordinates to the screen and back (view().imageToWidget(), view().pixelUnder()).
    ViewGeometry view() const;
    /// Shows the image as `view` says (its zoom, pan, turns and flips; the extent stays the image's and the pane's):
    /// `setView(view().rotated(1))`, `setView(view().fitted())`.
    void setView(const ViewGeometry &view);
    void setInverted(bool inverted);
    bool isInverted() const { return m_inverted; }
    /// Fit, centred, unrotated, unflipped, not inverted, the image's default window.
    void resetView();

    /// The view as a presentation state keeps it: window, the part of the image shown, rotation and flip (as a
    /// presentation state orders them), inversion (viewportpresentation.cpp).
    PresentationView presentationView() const;
    /// Shows the image as `view` says: its window, its area fitted to the pane, its rotation, flip and inversion.
    void applyPresentationView(const PresentationView &view);
    /// Shows the images `state` applies to as it says, from now on: each image's own window and displayed area as
    /// it comes into view (when it differs from the last image's: a window the reader set is kept until then), its
    /// shutter and its overlays; said on screen. The image in view now gets the whole view. Null: none (resetView
    /// also ends it).
    void setPresentationState(std::shared_ptr<const PresentationState> state, const QString &name);
    const PresentationState *presentationState() const { return m_presentation.get(); }
    /// Whether the state in use applies to the image in view (its shutter and overlays are shown).
    bool presentationApplies() const;

    /// What the left button does: pan, the crosshair, or draw with a measurement tool.
    ViewportTool tool() const { return m_tool; }
    void setTool(ViewportTool tool);
    /// The findings on the image in view: drawn, grabbed, edited and painted (findingslayer.h), kept in a model a
    /// study's panes share.
    FindingsLayer *findingsLayer() const { return m_findingsLayer; }

    /// Pixels of the image in view that hold no value (one byte a pixel, nonzero: none) and why — a reformatted
    /// plane's gaps, slices still arriving, outside the volume: hatched on screen, no value read there, no region
    /// statistics over them. setImage() and clear() end it.
    void setNoValue(const QByteArray &mask, const QString &why);
    bool hasNoValue(QPoint pixel) const;

    /// What the study viewer lays over the image: corner texts, modes, masks, reference lines, the crosshair,
    /// how much of the image is in (viewportlayers.h).
    ViewportLayers *layers() const { return m_layers; }
    /// Where the overlay's texts were drawn at the last paint (none over another), and what found no room.
    const OverlayPlacement &overlayPlacement() const { return m_overlayPlacement; }
    /// The text the overlay shows for the pixel under the cursor ("x 120 y 88  = 43 HU"); empty off the image.
    QString pixelReadout() const;
    /// The image as rendered with the current window (and inversion), before the view transform.
    QImage renderedImage() const { return m_rendered; }

Q_SIGNALS:
    /// The wheel asked for the next (+1) or previous (−1) slice; `alone` with Shift held (the linked panes are
    /// to stay where they are).
    void sliceStepRequested(int step, bool alone);
    void windowChanged(const spectrum::VoiWindow &window);
    void viewChanged();
    void frameChanged(int frame);
    /// With the crosshair tool, a point of the image was clicked (or dragged to), in image coordinates.
    void crosshairPicked(QPointF at);
    /// A double-click that drew or edited nothing (the pane is to be maximised, or back).
    void doubleClicked();
    /// The right button clicked without dragging (a drag sets the window): the pane's menu, at `globalPosition`.
    void menuRequested(QPoint globalPosition);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void leaveEvent(QEvent *event) override;

private:
    /// The presentation state's window and area for the image now in view, its overlays made into pictures.
    void applyPresentationToImage();
    /// The state's shutter and overlays, over the image (image coordinates through `t`).
    void paintPresentation(QPainter &p, const QTransform &t);

    void rerender(std::optional<PrerenderedFrame> ready = std::nullopt);
    VoiWindow withUsableWidth(VoiWindow window) const;
    /// Whether pixel row `y` of the image holds its value yet.
    bool valueKnown(int y) const { return y < m_valueRows; }
    QString windowText() const;
    // Drawn over the image (viewportoverlay.cpp).
    void paintOverlay(QPainter &p);

    bool m_pickingCrosshair = false;  ///< the left button held with the crosshair tool
    DecodedImage m_image;    ///< values and geometry
    DecodedImage m_shown;    ///< painted (filtered, or the image itself)
    QString m_filterNote;
    int m_valueRows = 0;
    int m_frame = 0;
    QString m_key;
    QImage m_rendered;
    mutable QImage m_shrunk;  ///< m_rendered averaged down to its size on screen (when shrunk)
    std::optional<VoiWindow> m_nextWindow;  ///< showNextWith()
    std::optional<PrerenderedFrame> m_nextRendered;  ///< showNextRendered()
    int m_framesRenderedHere = 0;
    mutable QImage m_paintable;  ///< m_rendered as RGB32 for magnified painting (Qt scales it ~3× faster than Gray8)
    bool m_smoothMagnify = true;
    VoiWindow m_window;
    bool m_windowSet = false;  ///< a window was chosen for an image (kept while the viewport waits for the next)
    ViewGeometry m_view;     ///< the reader's zoom, pan, turns and flips (view() adds the extent)
    bool m_inverted = false;
    std::shared_ptr<const PresentationState> m_presentation;
    QString m_presentationName;
    PresentationView m_presentationApplied;  ///< the last image's window and area from it
    QList<QImage> m_overlayPictures;  ///< the state's overlay planes, one bit a pixel
    QList<std::pair<QRectF, QImage>> m_presentationOverlays;  ///< the image in view's, where they lie on it

    ViewportTool m_tool = ViewportTool::pan();
    FindingsLayer *m_findingsLayer = nullptr;
    friend class FindingsLayer;  ///< reads the image in view: its key, the rows in, the pixels without a value

    QPoint m_dragStart;
    Qt::MouseButton m_dragButton = Qt::NoButton;
    VoiWindow m_dragStartWindow;
    QPointF m_dragStartPan;
    int m_wheelRemainder = 0;
    std::optional<QPointF> m_hover;  ///< widget position of the cursor, while over the viewport
    OverlayPlacement m_overlayPlacement;
    ViewportLayers *m_layers = nullptr;
    bool m_overlayWithoutImage = false;
    QByteArray m_noValue;     ///< setNoValue()
    QString m_noValueWhy;
    QImage m_noValueHatch;    ///< its pixels, hatched (ARGB, the image's size)
    QString m_message;
};

} // namespace spectrum

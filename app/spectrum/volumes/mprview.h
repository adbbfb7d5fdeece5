// SPDX-License-Identifier: Apache-2.0
#pragma once
// MprView: multiplanar reformatting of one series — axial, coronal and sagittal panes cut from its volume (MprVolume)
// through one point, the crosshair. A click or drag in a pane moves the point there (the two other planes follow);
// the wheel moves a pane's plane along its normal; , and . turn the crosshair of the active pane (the two other
// planes turn about its normal: oblique planes); a slab (MIP, MinIP, average) of any thickness; trilinear or nearest
// sampling. Each pane shows where the others cut it (reference lines) and the crosshair; window and level are one
// for all three; lengths and regions measure in mm and modality values (HU) as on any image, never over pixels
// without a value (gaps, slices still arriving: hatched). Planes are cut on the pool, never on the GUI thread; a
// pane asked again while cutting is cut once more with the latest point when the cut under way is done.

#include "viewport/imageviewport.h"
#include "volumes/mprvolume.h"

#include "spectrum/imaging/volumes/reformat.h"

#include <QWidget>

#include <array>

class QComboBox;
class QDoubleSpinBox;
class QLabel;

namespace spectrum {

class MprView : public QWidget
{
    Q_OBJECT
public:
    /// Shows `volume` (which it does not own) as it fills.
    explicit MprView(MprVolume *volume, QWidget *parent = nullptr);
    ~MprView() override;

    static constexpr int kPanes = 3;  ///< axial, coronal, sagittal (as first shown)
    ImageViewport *viewport(int pane) const { return m_panes[size_t(pane)].viewport; }
    MprVolume *mprVolume() const { return m_volume; }
    /// The crosshair: the point all three planes pass through (LPS, mm).
    Vector3 point() const { return m_point; }
    void setPoint(const Vector3 &point);
    /// The study's images record the patient's sex otherwise (StudySummary::sexDisagreement): said on every plane.
    void setSexDisagreement(const QString &counts) { m_sexDisagreement = counts; }
    /// The plane pane `pane` shows (or will show, once cut).
    ReformatPlane plane(int pane) const;
    /// Turns the crosshair in `pane` by `degrees` (clockwise on screen): the other two planes turn about its normal.
    void rotate(int pane, double degrees);
    /// Back to the standard planes through the same point.
    void resetOrientation();
    void setSlab(double thicknessMm, SlabMode mode);
    double slabThickness() const { return m_slab; }
    SlabMode slabMode() const { return m_mode; }
    void setInterpolation(Interpolation interpolation);
    /// The pane the keys act on (the last one clicked or scrolled).
    int activePane() const { return m_active; }
    void setActivePane(int pane);
    /// Cuts under way (for tests and the benchmark: 0 once every pane shows its latest plane).
    int cutsPending() const;
    /// What the status line says: the volume's notes, slices arriving, the slab.
    QString statusText() const;

Q_SIGNALS:
    /// Pane `pane` shows a freshly cut plane.
    void planeShown(int pane);
    /// The volume could not be made: why (the view stays empty, saying so).
    void refused(const QString &why);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    struct Pane
    {
        ImageViewport *viewport = nullptr;
        Vector3 row{}, column{};        ///< its plane's directions
        bool cutting = false, again = false;
        bool shown = false;
        QString name;                   ///< "axial"…
    };
    void onReady();
    void cut(int pane);
    void cutAll();
    void showPlane(int pane, ReformattedImage image);
    void updateLines();
    void updateStatus();
    void step(int pane, int steps);

    MprVolume *m_volume;
    std::array<Pane, kPanes> m_panes;
    Vector3 m_point{};
    double m_slab = 0;
    SlabMode m_mode = SlabMode::Mip;
    Interpolation m_interpolation = Interpolation::Trilinear;
    int m_active = 0;
    QString m_sexDisagreement;
    bool m_windowSet = false;
    bool m_laidOut = false;        ///< the point was set on the first layout (kept through the layouts after)
    bool m_syncingWindow = false;
    QLabel *m_status;
    QComboBox *m_modeBox;
    QDoubleSpinBox *m_thicknessBox;
    QComboBox *m_samplingBox;
};

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a DICOM image is, apart from its pixels: geometry, pixel encoding and display metadata.

#include "spectrum/core/dicomidentity.h"

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <array>

namespace spectrum {

enum class Photometric {
    Monochrome1,  ///< minimum value is white: displayed inverted
    Monochrome2,  ///< minimum value is black
    Rgb,
    YbrFull,
    PaletteColor,
    Other,
};

struct WindowPreset
{
    double center = 0;
    double width = 0;   ///< ≥ 1 (DICOM PS3.3 C.11.2.1.2)
    QString name;       ///< Window Center & Width Explanation, or ours ("min/max")
};

/// A VOI LUT from the VOI LUT Sequence (PS3.3 C.11.2): modality values from `firstMapped` on map to
/// `data` (`bits` significant bits); below the first entry the first applies, above the last the last.
struct VoiLut
{
    int firstMapped = 0;
    int bits = 16;
    QList<quint16> data;
    QString explanation;
};

/// What may differ from frame to frame of a multi-frame image: an enhanced object's functional groups (PS3.3
/// C.7.6.16) — where the frame lies, its pixel spacing and thickness, its rescale and its windows.
struct FrameAttributes
{
    bool hasPosition = false;
    std::array<double, 3> imagePosition{};
    std::array<double, 6> imageOrientation{};
    double rowSpacing = 0;
    double columnSpacing = 0;
    double sliceThickness = 0;
    double rescaleSlope = 1;
    double rescaleIntercept = 0;
    QString rescaleType;
    QList<WindowPreset> windows;
};

/// One segment of a Segmentation (PS3.3 C.8.20.2): what it marks, and the colour it is shown in.
struct Segment
{
    int number = 0;
    QString label;
    std::array<quint8, 3> colour{255, 64, 64};  ///< sRGB, from Recommended Display CIELab Value when given
};

/// Which image a frame of a Segmentation lies on: the source instance (and frame) it was derived from, where the
/// file says so; its place in the patient otherwise (matched by position).
struct SegmentFrame
{
    int segment = 0;             ///< Referenced Segment Number
    QString sourceSopInstanceUid;
    int sourceFrame = 0;         ///< 1-based; 0: the whole (single-frame) source
};

struct ImageInfo
{
    DicomIdentity identity;
    QString transferSyntaxUid;

    int rows = 0;
    int columns = 0;
    int frames = 1;
    int samplesPerPixel = 1;
    int bitsAllocated = 0;
    int bitsStored = 0;
    int highBit = 0;
    bool isSigned = false;
    bool floatSamples = false;  ///< Float (32) or Double Float (64) Pixel Data: real values, no bits to mask
    Photometric photometric = Photometric::Monochrome2;
    QString photometricName;   ///< as written in the file

    // Geometry, in millimetres and patient coordinates. Spacing 0 means unknown.
    double rowSpacing = 0;      ///< distance between rows (first value of Pixel Spacing)
    double columnSpacing = 0;   ///< distance between columns (second value of Pixel Spacing)
    /// A pixel's height over its width where Pixel Spacing does not say: Pixel Aspect Ratio (0028,0034), vertical over
    /// horizontal, or Imager Pixel Spacing's two values (a radiograph's detector); 0 when neither is recorded.
    double recordedAspect = 0;
    bool hasPosition = false;
    std::array<double, 3> imagePosition{};     ///< centre of the first transmitted pixel
    std::array<double, 6> imageOrientation{};  ///< row direction cosines, then column direction cosines
    double sliceThickness = 0;
    QString frameOfReferenceUid;  ///< images sharing it share patient coordinates (synchronised scrolling)
    QStringList imageType;        ///< Image Type's values: ORIGINAL, PRIMARY, AXIAL, LOCALIZER…

    // Modality LUT as rescale: value = stored * slope + intercept (in rescaleType units, e.g. HU).
    double rescaleSlope = 1;
    double rescaleIntercept = 0;
    QString rescaleType;

    /// What the decoder did that a reader should know (a stream's precision used over the header's, colour
    /// deeper than the screen's), for the overlay.
    QStringList notes;

    QList<WindowPreset> windows;  ///< presets from the file, in file order
    QList<VoiLut> voiLuts;        ///< the VOI LUT Sequence's tables, in file order

    // Multi-frame. The fields above describe the frame this info is for (frame(): the first, as decoded).
    QList<FrameAttributes> perFrame;  ///< one per frame when they differ (functional groups); empty otherwise
    int frameIndex = 0;               ///< which frame the geometry, rescale and windows above are
    double frameTimeMs = 0;           ///< nominal time per frame (Frame Time, Cine Rate, Recommended Display Frame Rate); 0 unknown
    QList<double> frameTimeVectorMs;  ///< Frame Time Vector: the time from each frame to the one before (the first 0)

    // A Segmentation's segments and what each frame marks (empty for other objects).
    QList<Segment> segments;
    QList<SegmentFrame> segmentFrames;  ///< one per frame
    int segmentationMaxFraction = 0;    ///< FRACTIONAL: Maximum Fractional Value (a pixel is in at half of it); 0: BINARY
    bool isSegmentation() const { return !segmentFrames.isEmpty(); }

    /// This info as for frame `index` (clamped): its position, orientation, spacing, thickness, rescale and
    /// windows from the functional groups; the same info for a single frame or frames that do not differ.
    ImageInfo frame(int index) const;
    /// The fields a frame may have of its own, as this info holds them; and those fields set from `a`.
    FrameAttributes frameAttributes() const;
    void setFrameAttributes(const FrameAttributes &a);
    /// How long frame `index` stays on screen in cine at the acquired rate, in ms; 0 when the file does not say.
    double frameDurationMs(int index) const;

    /// A projection through the patient (a radiograph, a CT's scout: Image Type LOCALIZER), not a slice of it: its
    /// values are not those of the slices beside it, even in one series.
    bool isProjection() const;
    /// How much taller than wide a pixel is on the patient: row spacing over column spacing; else the aspect the
    /// file records otherwise (recordedAspect); 1 when nothing says. An image is drawn columns wide by rows × this tall.
    double pixelAspect() const
    {
        return rowSpacing > 0 && columnSpacing > 0 ? rowSpacing / columnSpacing : recordedAspect > 0 ? recordedAspect : 1.0;
    }
    bool isMonochrome() const { return photometric == Photometric::Monochrome1 || photometric == Photometric::Monochrome2; }
    double toModalityValue(double stored) const { return stored * rescaleSlope + rescaleIntercept; }
    /// Unit of modality values for display: "HU" for CT, the Rescale Type if given, else empty.
    QString valueUnit() const;
    /// Position along the slice normal (row × column direction), for ordering slices; 0 without geometry.
    double slicePositionAlongNormal() const;
    /// The slice normal (row direction × column direction); zero without geometry.
    std::array<double, 3> sliceNormal() const;
    /// The centre of the image in patient coordinates; the image position without pixel spacing.
    std::array<double, 3> centre() const;

    static QString photometricToString(Photometric p);
};

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::ImageInfo)

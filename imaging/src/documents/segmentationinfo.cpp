// SPDX-License-Identifier: Apache-2.0
#include "documents/segmentationinfo.h"

#include <algorithm>
#include <cmath>

namespace spectrum::dcmtk {

std::array<quint8, 3> rgbFromDicomLab(quint16 l16, quint16 a16, quint16 b16)
{
    const double L = l16 * 100.0 / 65535.0, a = a16 * 255.0 / 65535.0 - 128.0, b = b16 * 255.0 / 65535.0 - 128.0;
    const double fy = (L + 16) / 116, fx = fy + a / 500, fz = fy - b / 200;
    auto inverse = [](double t) { return t > 6.0 / 29 ? t * t * t : 3 * (6.0 / 29) * (6.0 / 29) * (t - 4.0 / 29); };
    const double X = 0.95047 * inverse(fx), Y = inverse(fy), Z = 1.08883 * inverse(fz);
    const double lin[3] = {3.2406 * X - 1.5372 * Y - 0.4986 * Z, -0.9689 * X + 1.8758 * Y + 0.0415 * Z, 0.0557 * X - 0.2040 * Y + 1.0570 * Z};
    std::array<quint8, 3> rgb{};
    for (int i = 0; i < 3; ++i) {
        const double c = std::clamp(lin[i], 0.0, 1.0);
        const double g = c <= 0.0031308 ? 12.92 * c : 1.055 * std::pow(c, 1 / 2.4) - 0.055;
        rgb[size_t(i)] = quint8(std::lround(g * 255));
    }
    return rgb;
}

void readSegmentation(DcmItem *ds, const DicomTextDecoder &text, ImageInfo &info)
{
    if (getString(ds, DCM_SOPClassUID) != QLatin1String("1.2.840.10008.5.1.4.1.1.66.4"))
        return;
    // Colours for segments that recommend none: distinct, bright over gray.
    static const std::array<quint8, 3> palette[] = {{255, 64, 64}, {64, 200, 255}, {255, 200, 40}, {120, 255, 90}, {220, 90, 255}, {255, 140, 40}};
    if (getString(ds, DCM_SegmentationType) == QLatin1String("FRACTIONAL"))
        info.segmentationMaxFraction = std::max(1, getInt(ds, DCM_MaximumFractionalValue, 255));
    DcmSequenceOfItems *segments = nullptr;
    if (ds->findAndGetSequence(DCM_SegmentSequence, segments).good() && segments) {
        for (unsigned long i = 0; i < segments->card(); ++i) {
            DcmItem *item = segments->getItem(i);
            Segment s;
            s.number = getInt(item, DCM_SegmentNumber, int(i) + 1);
            s.label = getString(item, DCM_SegmentLabel, &text);
            s.colour = palette[i % (sizeof(palette) / sizeof(palette[0]))];
            Uint16 lab[3] = {};
            if (item->findAndGetUint16(DCM_RecommendedDisplayCIELabValue, lab[0], 0).good() && item->findAndGetUint16(DCM_RecommendedDisplayCIELabValue, lab[1], 1).good()
                && item->findAndGetUint16(DCM_RecommendedDisplayCIELabValue, lab[2], 2).good())
                s.colour = rgbFromDicomLab(lab[0], lab[1], lab[2]);
            info.segments << s;
        }
    }
    DcmSequenceOfItems *perFrame = nullptr;
    if (ds->findAndGetSequence(DCM_PerFrameFunctionalGroupsSequence, perFrame).bad() || !perFrame || int(perFrame->card()) != info.frames)
        return;
    DcmItem *shared = nullptr;
    if (ds->findAndGetSequenceItem(DCM_SharedFunctionalGroupsSequence, shared, 0).bad())
        shared = nullptr;
    for (unsigned long i = 0; i < perFrame->card(); ++i) {
        DcmItem *groups = perFrame->getItem(i);
        SegmentFrame f;
        DcmItem *identification = nullptr;
        if (groups->findAndGetSequenceItem(DCM_SegmentIdentificationSequence, identification, 0).good()
            || (shared && shared->findAndGetSequenceItem(DCM_SegmentIdentificationSequence, identification, 0).good()))
            f.segment = getInt(identification, DCM_ReferencedSegmentNumber, 0);
        DcmItem *derivation = nullptr, *source = nullptr;
        if (groups->findAndGetSequenceItem(DCM_DerivationImageSequence, derivation, 0).good() && derivation
            && derivation->findAndGetSequenceItem(DCM_SourceImageSequence, source, 0).good() && source) {
            f.sourceSopInstanceUid = getString(source, DCM_ReferencedSOPInstanceUID);
            f.sourceFrame = getInt(source, DCM_ReferencedFrameNumber, 0);
        }
        info.segmentFrames << f;
    }
}

} // namespace spectrum::dcmtk

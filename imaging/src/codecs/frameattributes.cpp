// SPDX-License-Identifier: Apache-2.0
#include "codecs/frameattributes.h"

namespace spectrum::dcmtk {

namespace {

double number(DcmItem *item, const DcmTagKey &tag, unsigned long pos, double fallback, bool *found = nullptr)
{
    Float64 v = 0;
    const bool ok = item->findAndGetFloat64(tag, v, pos).good();
    if (found)
        *found = ok;
    return ok ? double(v) : fallback;
}

DcmItem *firstItem(DcmItem *groups, const DcmTagKey &sequence)
{
    DcmItem *item = nullptr;
    return groups && groups->findAndGetSequenceItem(sequence, item, 0).good() ? item : nullptr;
}

/// What one functional groups item (shared, or one frame's) says, over `f`.
void apply(DcmItem *groups, const DicomTextDecoder &text, FrameAttributes &f, bool *positioned, bool *oriented)
{
    if (!groups)
        return;
    if (DcmItem *m = firstItem(groups, DCM_PixelMeasuresSequence)) {
        bool found = false;
        const double row = number(m, DCM_PixelSpacing, 0, 0, &found);
        if (found) {
            f.rowSpacing = row;
            f.columnSpacing = number(m, DCM_PixelSpacing, 1, row);
        }
        f.sliceThickness = number(m, DCM_SliceThickness, 0, f.sliceThickness);
    }
    if (DcmItem *p = firstItem(groups, DCM_PlanePositionSequence)) {
        bool all = true;
        std::array<double, 3> at{};
        for (unsigned long i = 0; i < 3; ++i) {
            bool found = false;
            at[i] = number(p, DCM_ImagePositionPatient, i, 0, &found);
            all = all && found;
        }
        if (all) {
            f.imagePosition = at;
            *positioned = true;
        }
    }
    if (DcmItem *o = firstItem(groups, DCM_PlaneOrientationSequence)) {
        bool all = true;
        std::array<double, 6> cosines{};
        for (unsigned long i = 0; i < 6; ++i) {
            bool found = false;
            cosines[i] = number(o, DCM_ImageOrientationPatient, i, 0, &found);
            all = all && found;
        }
        if (all) {
            f.imageOrientation = cosines;
            *oriented = true;
        }
    }
    if (DcmItem *t = firstItem(groups, DCM_PixelValueTransformationSequence)) {
        bool found = false;
        const double slope = number(t, DCM_RescaleSlope, 0, 1, &found);
        if (found && slope != 0)
            f.rescaleSlope = slope;
        f.rescaleIntercept = number(t, DCM_RescaleIntercept, 0, f.rescaleIntercept);
        const QString type = getString(t, DCM_RescaleType);
        if (!type.isEmpty())
            f.rescaleType = type;
    }
    if (DcmItem *v = firstItem(groups, DCM_FrameVOILUTSequence)) {
        const QList<WindowPreset> windows = readWindows(v, text);
        if (!windows.isEmpty())
            f.windows = windows;
    }
}

bool sameAttributes(const FrameAttributes &a, const FrameAttributes &b)
{
    auto sameWindows = [](const QList<WindowPreset> &x, const QList<WindowPreset> &y) {
        if (x.size() != y.size())
            return false;
        for (qsizetype i = 0; i < x.size(); ++i)
            if (x[i].center != y[i].center || x[i].width != y[i].width)
                return false;
        return true;
    };
    return a.hasPosition == b.hasPosition && a.imagePosition == b.imagePosition && a.imageOrientation == b.imageOrientation
        && a.rowSpacing == b.rowSpacing && a.columnSpacing == b.columnSpacing && a.sliceThickness == b.sliceThickness
        && a.rescaleSlope == b.rescaleSlope && a.rescaleIntercept == b.rescaleIntercept && sameWindows(a.windows, b.windows);
}
} // namespace

QList<WindowPreset> readWindows(DcmItem *item, const DicomTextDecoder &text)
{
    QList<WindowPreset> windows;
    DcmElement *e = nullptr;
    const unsigned long count = item->findAndGetElement(DCM_WindowCenter, e).good() && e ? e->getVM() : 0ul;
    for (unsigned long i = 0; i < count; ++i) {
        bool c = false, w = false;
        WindowPreset p;
        p.center = number(item, DCM_WindowCenter, i, 0, &c);
        p.width = number(item, DCM_WindowWidth, i, 0, &w);
        OFString explanation;
        if (item->findAndGetOFString(DCM_WindowCenterWidthExplanation, explanation, i).good())
            p.name = text.decode(QByteArray(explanation.c_str(), qsizetype(explanation.length())));
        if (c && w && p.width >= 1)
            windows.append(p);
    }
    return windows;
}

void readFrameAttributes(DcmItem *ds, const DicomTextDecoder &text, ImageInfo &info)
{
    // Cine timing: Frame Time, else Cine Rate, else Recommended Display Frame Rate; the vector when given.
    const double frameTime = number(ds, DCM_FrameTime, 0, 0);
    const double cineRate = number(ds, DCM_CineRate, 0, 0);
    const double recommended = number(ds, DCM_RecommendedDisplayFrameRate, 0, 0);
    info.frameTimeMs = frameTime > 0 ? frameTime : cineRate > 0 ? 1000.0 / cineRate : recommended > 0 ? 1000.0 / recommended : 0;
    DcmElement *vector = nullptr;
    if (ds->findAndGetElement(DCM_FrameTimeVector, vector).good() && vector && int(vector->getVM()) == info.frames) {
        for (unsigned long i = 0; i < vector->getVM(); ++i)
            info.frameTimeVectorMs << number(ds, DCM_FrameTimeVector, i, 0);
    }

    DcmItem *shared = firstItem(ds, DCM_SharedFunctionalGroupsSequence);
    DcmSequenceOfItems *perFrame = nullptr;
    if (ds->findAndGetSequence(DCM_PerFrameFunctionalGroupsSequence, perFrame).bad())
        perFrame = nullptr;
    if (!shared && !perFrame) {
        // RT Dose grids: Grid Frame Offset Vector places each frame along the normal from Image Position
        // (PS3.3 C.8.8.3.2); offsets relative to the first frame when its first value is 0, else absolute.
        DcmElement *offsets = nullptr;
        if (info.frames > 1 && info.hasPosition && ds->findAndGetElement(DCM_GridFrameOffsetVector, offsets).good() && offsets
            && int(offsets->getVM()) == info.frames) {
            const std::array<double, 3> normal = info.sliceNormal();
            const double first = number(ds, DCM_GridFrameOffsetVector, 0, 0);
            const double along = info.slicePositionAlongNormal();
            for (int f = 0; f < info.frames; ++f) {
                FrameAttributes a = info.frameAttributes();
                const double offset = number(ds, DCM_GridFrameOffsetVector, unsigned(f), 0);
                const double shift = first == 0 ? offset : offset - along;
                for (int i = 0; i < 3; ++i)
                    a.imagePosition[size_t(i)] = info.imagePosition[size_t(i)] + shift * normal[size_t(i)];
                info.perFrame << a;
            }
        } else if (info.frames > 1 && info.hasPosition && DcmTag(DCM_FrameIncrementPointer).getEVR() != EVR_UNKNOWN
                   && ds->tagExists(DCM_FrameIncrementPointer) && !ds->tagExists(DCM_FrameTime) && !ds->tagExists(DCM_FrameTimeVector)) {
            // Frames that vary by something other than time, with one position for all: where each lies is not
            // known — no frame after the first claims the first one's place.
            for (int f = 0; f < info.frames; ++f) {
                FrameAttributes a = info.frameAttributes();
                a.hasPosition = f == 0;
                info.perFrame << a;
            }
        }
        return;
    }
    FrameAttributes base = info.frameAttributes();
    bool positioned = info.hasPosition, oriented = info.hasPosition;
    apply(shared, text, base, &positioned, &oriented);
    base.hasPosition = positioned && oriented;
    QList<FrameAttributes> frames;
    if (perFrame && int(perFrame->card()) == info.frames) {
        for (unsigned long i = 0; i < perFrame->card(); ++i) {
            FrameAttributes f = base;
            bool p = positioned, o = oriented;
            apply(perFrame->getItem(i), text, f, &p, &o);
            f.hasPosition = p && o;
            frames << f;
        }
    }
    // The image's own fields: the first frame's (or the shared groups') attributes.
    info.setFrameAttributes(frames.isEmpty() ? base : frames.first());
    if (frames.size() > 1 && std::any_of(frames.begin() + 1, frames.end(), [&](const FrameAttributes &f) { return !sameAttributes(f, frames.first()); }))
        info.perFrame = frames;
}

} // namespace spectrum::dcmtk

// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/imageinfo.h"

#include <algorithm>

namespace spectrum {

QString ImageInfo::valueUnit() const
{
    if (!rescaleType.isEmpty() && rescaleType != QLatin1String("US"))
        return rescaleType;
    if (identity.modality == QLatin1String("CT"))
        return QStringLiteral("HU");
    return QString();
}

bool ImageInfo::isProjection() const
{
    static const QStringList projectionModalities = {QStringLiteral("CR"), QStringLiteral("DX"), QStringLiteral("MG"), QStringLiteral("XA"),
                                                     QStringLiteral("RF"), QStringLiteral("IO"), QStringLiteral("PX")};
    return imageType.contains(QLatin1String("LOCALIZER")) || projectionModalities.contains(identity.modality);
}

double ImageInfo::slicePositionAlongNormal() const
{
    const std::array<double, 3> n = sliceNormal();
    return n[0] * imagePosition[0] + n[1] * imagePosition[1] + n[2] * imagePosition[2];
}

std::array<double, 3> ImageInfo::sliceNormal() const
{
    if (!hasPosition)
        return {};
    const auto &o = imageOrientation;
    return {o[1] * o[5] - o[2] * o[4], o[2] * o[3] - o[0] * o[5], o[0] * o[4] - o[1] * o[3]};
}

std::array<double, 3> ImageInfo::centre() const
{
    std::array<double, 3> c = imagePosition;
    const auto &o = imageOrientation;
    for (int i = 0; i < 3; ++i)  // along a row the column index grows by the column spacing, down a column by the row's
        c[size_t(i)] += o[size_t(i)] * columnSpacing * (columns - 1) / 2 + o[size_t(i) + 3] * rowSpacing * (rows - 1) / 2;
    return c;
}

ImageInfo ImageInfo::frame(int index) const
{
    ImageInfo out = *this;
    out.frameIndex = std::clamp(index, 0, std::max(0, frames - 1));
    if (perFrame.size() != frames || perFrame.isEmpty())
        return out;
    out.setFrameAttributes(perFrame[out.frameIndex]);
    return out;
}

FrameAttributes ImageInfo::frameAttributes() const
{
    FrameAttributes f;
    f.hasPosition = hasPosition;
    f.imagePosition = imagePosition;
    f.imageOrientation = imageOrientation;
    f.rowSpacing = rowSpacing;
    f.columnSpacing = columnSpacing;
    f.sliceThickness = sliceThickness;
    f.rescaleSlope = rescaleSlope;
    f.rescaleIntercept = rescaleIntercept;
    f.rescaleType = rescaleType;
    f.windows = windows;
    return f;
}

void ImageInfo::setFrameAttributes(const FrameAttributes &f)
{
    hasPosition = f.hasPosition;
    imagePosition = f.imagePosition;
    imageOrientation = f.imageOrientation;
    rowSpacing = f.rowSpacing;
    columnSpacing = f.columnSpacing;
    sliceThickness = f.sliceThickness;
    rescaleSlope = f.rescaleSlope;
    rescaleIntercept = f.rescaleIntercept;
    rescaleType = f.rescaleType;
    windows = f.windows;
}

double ImageInfo::frameDurationMs(int index) const
{
    // Frame Time Vector: element i is the time from frame i − 1 to frame i; frame i is shown until frame i + 1.
    if (frameTimeVectorMs.size() == frames && frames > 1) {
        const int next = std::clamp(index + 1, 1, frames - 1);
        if (frameTimeVectorMs[next] > 0)
            return frameTimeVectorMs[next];
    }
    return frameTimeMs > 0 ? frameTimeMs : 0;
}

QString ImageInfo::photometricToString(Photometric p)
{
    switch (p) {
    case Photometric::Monochrome1: return QStringLiteral("MONOCHROME1");
    case Photometric::Monochrome2: return QStringLiteral("MONOCHROME2");
    case Photometric::Rgb: return QStringLiteral("RGB");
    case Photometric::YbrFull: return QStringLiteral("YBR_FULL");
    case Photometric::PaletteColor: return QStringLiteral("PALETTE COLOR");
    case Photometric::Other: break;
    }
    return QStringLiteral("OTHER");
}

} // namespace spectrum

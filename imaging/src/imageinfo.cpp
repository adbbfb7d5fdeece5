#include "spectrum/imaging/imageinfo.h"

namespace spectrum {

QString ImageInfo::valueUnit() const
{
    if (!rescaleType.isEmpty() && rescaleType != QLatin1String("US"))
        return rescaleType;
    if (identity.modality == QLatin1String("CT"))
        return QStringLiteral("HU");
    return QString();
}

double ImageInfo::slicePositionAlongNormal() const
{
    if (!hasPosition)
        return 0;
    const auto &o = imageOrientation;
    const double n[3] = {o[1] * o[5] - o[2] * o[4], o[2] * o[3] - o[0] * o[5], o[0] * o[4] - o[1] * o[3]};
    return n[0] * imagePosition[0] + n[1] * imagePosition[1] + n[2] * imagePosition[2];
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

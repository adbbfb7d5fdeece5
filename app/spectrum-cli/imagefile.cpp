// SPDX-License-Identifier: Apache-2.0
#include "imagefile.h"

#include <QFileInfo>
#include <QSaveFile>

#include <png.h>

namespace spectrum::cli {

namespace {
QByteArray encodePng(const PixelBuffer &rendered, QString *error)
{
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    image.width = png_uint_32(rendered.width());
    image.height = png_uint_32(rendered.height());
    image.format = rendered.format() == PixelFormat::Gray8 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
    const png_int_32 stride = png_int_32(PNG_IMAGE_ROW_STRIDE(image));
    const void *pixels = rendered.frameData(0);
    png_alloc_size_t size = 0;
    // First the size, then the bytes (libpng's simplified API, 1.6).
    if (!png_image_write_to_memory(&image, nullptr, &size, 0, pixels, stride, nullptr)) {
        *error = QString::fromLatin1(image.message);
        return {};
    }
    QByteArray out(qsizetype(size), Qt::Uninitialized);
    if (!png_image_write_to_memory(&image, out.data(), &size, 0, pixels, stride, nullptr)) {
        *error = QString::fromLatin1(image.message);
        return {};
    }
    out.resize(qsizetype(size));
    return out;
}

QByteArray encodePnm(const PixelBuffer &rendered)
{
    const bool gray = rendered.format() == PixelFormat::Gray8;
    QByteArray out = QByteArray(gray ? "P5\n" : "P6\n") + QByteArray::number(rendered.width()) + ' ' + QByteArray::number(rendered.height()) + "\n255\n";
    out.append(reinterpret_cast<const char *>(rendered.frameData(0)), rendered.frameBytes());
    return out;
}
} // namespace

Error writeImageFile(const PixelBuffer &rendered, const QString &path)
{
    if (rendered.isNull() || (rendered.format() != PixelFormat::Gray8 && rendered.format() != PixelFormat::Rgb24))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("nothing rendered to write to %1").arg(path));
    const QString suffix = QFileInfo(path).suffix().toLower();
    const bool gray = rendered.format() == PixelFormat::Gray8;
    QByteArray bytes;
    if (suffix == QLatin1String("png")) {
        QString why;
        bytes = encodePng(rendered, &why);
        if (bytes.isEmpty())
            return Error(ErrorCode::Internal, QStringLiteral("cannot encode %1 as PNG: %2").arg(path, why));
    } else if (suffix == QLatin1String("pnm") || (suffix == QLatin1String("pgm") && gray) || (suffix == QLatin1String("ppm") && !gray)) {
        bytes = encodePnm(rendered);
    } else if (suffix == QLatin1String("pgm")) {
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: the image is in colour; write .ppm, .pnm or .png").arg(path));
    } else {
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1: write .png, .pgm, .ppm or .pnm").arg(path));
    }
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
        return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
    return Error();
}

} // namespace spectrum::cli

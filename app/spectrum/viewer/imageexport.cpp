// SPDX-License-Identifier: Apache-2.0
#include "viewer/imageexport.h"

#include "viewport/displayimage.h"
#include "viewport/imageviewport.h"
#include "viewer/studyviewer.h"

#include "spectrum/core/resultjob.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/imaging/codecs/videowriter.h"
#include "spectrum/imaging/windowlevel.h"
#include "spectrum/stores/blobs/blobstore.h"

#include <QDir>
#include <QImageWriter>
#include <QTimer>

#include <memory>

namespace spectrum {

namespace {

/// Writes `image` as PNG or JPEG, whole or not at all.
Error writePicture(const QImage &image, const QString &path, const ImageExportOptions &o)
{
    QImageWriter writer(path, o.format == ImageExportOptions::Format::Jpeg ? QByteArray("jpeg") : QByteArray("png"));
    if (o.format == ImageExportOptions::Format::Jpeg)
        writer.setQuality(o.jpegQuality);
    // JPEG has no alpha and is best given RGB; PNG keeps grey images grey.
    const QImage out = o.format == ImageExportOptions::Format::Jpeg && image.hasAlphaChannel() ? image.convertToFormat(QImage::Format_RGB32) : image;
    if (!writer.write(out))
        return Error(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(path, writer.errorString()));
    return Error();
}

/// `rendered` (the image's own pixels under a window) as a picture of the patient: non-square pixels stretched
/// along their wider spacing, so that a circle stays a circle (nothing averaged away).
QImage withSquarePixels(const QImage &rendered, const ImageInfo &info)
{
    return resampledTo(rendered, squarePixelSize(rendered.width(), rendered.height(), info.pixelAspect()));
}

QImage rgbFrame(const QImage &image)
{
    return image.convertToFormat(QImage::Format_RGB888);
}

} // namespace

ImageExporter::ImageExporter(StudyViewer *viewer, BlobStore *cache, ImageExportOptions options, QObject *parent)
    : QObject(parent), m_viewer(viewer), m_cache(cache), m_options(std::move(options))
{
}

QString ImageExporter::fileFor(int index) const
{
    const QString suffix = m_options.format == ImageExportOptions::Format::Jpeg ? QStringLiteral("jpg") : QStringLiteral("png");
    return QDir(m_options.target).filePath(QStringLiteral("IMAGE-%1.%2").arg(index + 1, 4, 10, QLatin1Char('0')).arg(suffix));
}

void ImageExporter::start()
{
    if (!m_viewer || !m_viewer->viewport()->hasImage())
        return finish(0, Error(ErrorCode::InvalidArgument, tr("no image in view")));
    if (m_options.target.isEmpty())
        return finish(0, Error(ErrorCode::InvalidArgument, tr("no file or folder to write to")));
    if (m_options.format == ImageExportOptions::Format::Mp4 && m_options.withOverlay)
        return finish(0, Error(ErrorCode::Unsupported, tr("a cine is made of the images alone: export it without the overlay")));
    if (m_options.what == ImageExportOptions::What::ImageInView && m_options.format != ImageExportOptions::Format::Mp4)
        return exportImageInView();
    if (m_options.format != ImageExportOptions::Format::Mp4 && !QDir().mkpath(m_options.target))
        return finish(0, Error(ErrorCode::Io, tr("cannot make the folder %1").arg(m_options.target)));
    if (m_viewer->seriesIndex() < 0)
        return finish(0, Error(ErrorCode::InvalidArgument, tr("no series in view")));
    for (const InstanceRef &i : m_viewer->activeStudy().series[m_viewer->seriesIndex()].instances)
        m_keys << i.key;
    if (m_options.withOverlay) {
        m_next = 0;
        return stepAndGrab();
    }
    exportSeriesFromCache();
}

void ImageExporter::exportImageInView()
{
    ImageViewport *vp = m_viewer->viewport();
    // With the overlay: the pane as the reader sees it. Without: the image at its own resolution (non-square pixels
    // stretched square), in the window in use.
    const QImage picture = m_options.withOverlay ? vp->grab().toImage() : withSquarePixels(vp->renderedImage(), vp->image().info);
    // A file named as a picture is written as such; anything else names a folder (made if need be), as the dialog
    // says — never a picture without its suffix.
    const QString suffix = QFileInfo(m_options.target).suffix().toLower();
    const bool namesAFile = !QFileInfo(m_options.target).isDir()
                         && (m_options.format == ImageExportOptions::Format::Jpeg ? suffix == QLatin1String("jpg") || suffix == QLatin1String("jpeg")
                                                                                  : suffix == QLatin1String("png"));
    if (!namesAFile && !QDir().mkpath(m_options.target))
        return finish(0, Error(ErrorCode::Io, tr("cannot make the folder %1").arg(m_options.target)));
    const QString path = namesAFile ? m_options.target : fileFor(0);
    const Error e = writePicture(picture, path, m_options);
    finish(e.isError() ? 0 : 1, e);
}

void ImageExporter::exportSeriesFromCache()
{
    if (!m_cache->readsOnAnyThread())
        return finish(0, Error(ErrorCode::Unsupported, tr("the cache cannot be read off its own thread")));
    ImageViewport *vp = m_viewer->viewport();
    const VoiWindow window = vp->window();
    const bool inverted = vp->isInverted();
    // A multi-frame image in view: its frames; else the series' instances.
    const bool frames = vp->frameCount() > 1;
    const QStringList keys = frames ? QStringList{m_keys.value(m_viewer->sliceIndex())} : m_keys;
    auto job = makeJob<int>([cache = m_cache, keys, window, inverted, frames, options = m_options,
                             folder = m_options.target](const CancelToken &cancel) -> Result<int> {
        std::unique_ptr<VideoWriter> video;
        int written = 0;
        auto add = [&](const QImage &picture) -> Error {
            if (options.format == ImageExportOptions::Format::Mp4) {
                const QImage rgb = rgbFrame(picture);
                if (!video) {
                    Result<std::unique_ptr<VideoWriter>> opened = VideoWriter::open(options.target, rgb.width(), rgb.height(), options.framesPerSecond);
                    if (!opened.isOk())
                        return opened.error();
                    video = std::move(opened.value());
                }
                return video->addFrame(rgb.constBits(), int(rgb.bytesPerLine()), rgb.width(), rgb.height());
            }
            const QString suffix = options.format == ImageExportOptions::Format::Jpeg ? QStringLiteral("jpg") : QStringLiteral("png");
            const Error e = writePicture(picture, QDir(folder).filePath(QStringLiteral("IMAGE-%1.%2").arg(written + 1, 4, 10, QLatin1Char('0')).arg(suffix)), options);
            return e;
        };
        for (const QString &key : keys) {
            if (cancel.isCancelled())
                return Error(ErrorCode::Cancelled, QStringLiteral("cancelled"));
            Result<ByteView> bytes = runSync(cache->read(key));
            if (!bytes.isOk())
                return bytes.error().withContext(QStringLiteral("an image of the series is not here yet"));
            Result<DecodedImage> image = decodeDicom(bytes.value());
            if (!image.isOk())
                return image.error().withContext(key);
            const int count = frames ? std::max(1, image.value().info.frames) : 1;
            for (int f = 0; f < count; ++f) {
                QImage picture = withSquarePixels(toQImage(renderFrame(image.value(), f, window)), image.value().info.frame(f)).copy();
                if (inverted)
                    picture.invertPixels();
                if (Error e = add(picture); e.isError())
                    return e;
                ++written;
            }
        }
        if (video)
            if (Error e = video->finish(); e.isError())
                return e;
        return options.format == ImageExportOptions::Format::Mp4 ? 1 : written;
    });
    whenDone(job, this, [this](const Result<int> &r) { finish(r.isOk() ? r.value() : 0, r.isOk() ? Error() : r.error()); });
}

void ImageExporter::stepAndGrab()
{
    // Each slice in turn, taken once whole on screen as the pane shows it.
    if (!m_shown)
        m_shown = connect(m_viewer, &StudyViewer::imageShown, this, [this](int index) {
            if (index == m_next && m_viewer->viewport()->layers()->completeness() >= 1.0)
                QTimer::singleShot(0, this, &ImageExporter::grabCurrent);  // after the pane has painted
        });
    if (m_next >= m_keys.size())
        return finish(m_written, Error());
    if (m_viewer->sliceIndex() == m_next && m_viewer->viewport()->layers()->completeness() >= 1.0
        && m_viewer->viewport()->image().info.identity.sopInstanceUid.isEmpty() == false)
        QTimer::singleShot(0, this, &ImageExporter::grabCurrent);
    else
        m_viewer->showSlice(m_next);
}

void ImageExporter::grabCurrent()
{
    if (m_done || !m_viewer || m_viewer->sliceIndex() != m_next)
        return;
    const QImage picture = m_viewer->viewport()->grab().toImage();
    if (Error e = writePicture(picture, fileFor(m_next), m_options); e.isError())
        return finish(m_written, e);
    ++m_written;
    ++m_next;
    stepAndGrab();
}

void ImageExporter::finish(int files, const Error &error)
{
    if (m_done)
        return;
    m_done = true;
    disconnect(m_shown);
    Q_EMIT finished(files, error);
}

} // namespace spectrum

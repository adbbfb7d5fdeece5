// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/codecs/videowriter.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QProcess>
#include <QStandardPaths>

#include <cmath>

namespace spectrum {

namespace {

constexpr int kStartMs = 30000;
constexpr int kFrameMs = 120000;   // a frame handed over: the encoder may be busy with the ones before
constexpr int kFinishMs = 600000;

/// The encoder this ffmpeg has: libx264 when built in (Debian's is), else its own MPEG-4 Part 2. Asked once.
QString encoderOf(const QString &ffmpeg)
{
    static QMutex mutex;
    static QString asked, answer;
    QMutexLocker lock(&mutex);
    if (asked == ffmpeg)
        return answer;
    QProcess p;
    p.start(ffmpeg, {QStringLiteral("-hide_banner"), QStringLiteral("-encoders")});
    QString found;
    if (p.waitForFinished(kStartMs) && p.exitStatus() == QProcess::NormalExit) {
        const QString list = QString::fromLocal8Bit(p.readAllStandardOutput());
        for (const QString &line : list.split(QLatin1Char('\n'))) {
            const QStringList words = line.simplified().split(QLatin1Char(' '));
            if (words.size() >= 2 && words.at(0).startsWith(QLatin1Char('V'))) {
                if (words.at(1) == QLatin1String("libx264"))
                    found = words.at(1);
                else if (words.at(1) == QLatin1String("mpeg4") && found.isEmpty())
                    found = words.at(1);
            }
        }
    }
    asked = ffmpeg;
    answer = found;
    return found;
}

QString lastLines(const QByteArray &err)
{
    const QStringList lines = QString::fromLocal8Bit(err).trimmed().split(QLatin1Char('\n'));
    return lines.mid(std::max<qsizetype>(0, lines.size() - 3)).join(QStringLiteral("; "));
}

} // namespace

struct VideoWriter::Private
{
    QProcess process;
    QString path, partial;
    int width = 0, height = 0;   ///< of the frames given
    bool finished = false;

    ~Private()
    {
        if (!finished) {
            process.kill();
            process.waitForFinished(kStartMs);
            QFile::remove(partial);
        }
    }

    Error failure(const QString &what)
    {
        process.kill();
        process.waitForFinished(kStartMs);
        finished = true;
        QFile::remove(partial);
        const QString said = lastLines(process.readAllStandardError());
        return Error(ErrorCode::Io, said.isEmpty() ? what : QStringLiteral("%1: ffmpeg said %2").arg(what, said));
    }
};

VideoWriter::VideoWriter(std::unique_ptr<Private> p) : d(std::move(p)) {}

VideoWriter::~VideoWriter() = default;

QString VideoWriter::program()
{
    const QString named = qEnvironmentVariable("SPECTRUM_FFMPEG");
    if (!named.isEmpty())
        return QFileInfo(named).isExecutable() ? named : QString();
    return QStandardPaths::findExecutable(QStringLiteral("ffmpeg"));
}

Result<std::unique_ptr<VideoWriter>> VideoWriter::open(const QString &path, int width, int height, double framesPerSecond)
{
    if (width < 1 || height < 1 || width > 8192 || height > 8192)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("a video of %1 × %2 pixels is not made").arg(width).arg(height));
    if (!(framesPerSecond >= 0.1 && framesPerSecond <= 120))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1 frames per second is not a rate for a cine").arg(framesPerSecond));
    const QString ffmpeg = program();
    if (ffmpeg.isEmpty())
        return Error(ErrorCode::Unsupported, QStringLiteral("MP4 cines are made by the ffmpeg program, which is not installed "
                                                            "(Debian: apt install ffmpeg)"));
    const QString encoder = encoderOf(ffmpeg);
    if (encoder.isEmpty())
        return Error(ErrorCode::Unsupported, QStringLiteral("%1 has neither an H.264 nor an MPEG-4 encoder").arg(ffmpeg));
    auto d = std::make_unique<Private>();
    d->width = width;
    d->height = height;
    d->path = path;
    // Written beside its place under a name no player takes for the cine, renamed when whole.
    const QFileInfo target(path);
    d->partial = target.dir().filePath(QStringLiteral(".%1.part").arg(target.fileName()));
    const QString rate = QStringLiteral("%1/1000").arg(std::lround(framesPerSecond * 1000));
    QStringList args{QStringLiteral("-hide_banner"), QStringLiteral("-nostdin"), QStringLiteral("-loglevel"), QStringLiteral("error"),
                     QStringLiteral("-f"), QStringLiteral("rawvideo"), QStringLiteral("-pix_fmt"), QStringLiteral("rgb24"),
                     QStringLiteral("-s"), QStringLiteral("%1x%2").arg(width).arg(height), QStringLiteral("-framerate"), rate,
                     QStringLiteral("-i"), QStringLiteral("pipe:0"),
                     // Even sizes for 4:2:0: a black column or row added, nothing scaled.
                     QStringLiteral("-vf"), QStringLiteral("pad=ceil(iw/2)*2:ceil(ih/2)*2:0:0:black"),
                     QStringLiteral("-c:v"), encoder, QStringLiteral("-pix_fmt"), QStringLiteral("yuv420p"), QStringLiteral("-g"), QStringLiteral("12")};
    if (encoder == QLatin1String("libx264"))
        args << QStringLiteral("-crf") << QStringLiteral("18");  // visually lossless for greyscale images
    else
        args << QStringLiteral("-b:v") << QStringLiteral("8M");
    args << QStringLiteral("-movflags") << QStringLiteral("+faststart") << QStringLiteral("-f") << QStringLiteral("mp4")
         << QStringLiteral("-y") << d->partial;
    d->process.setProcessChannelMode(QProcess::SeparateChannels);
    d->process.setStandardOutputFile(QProcess::nullDevice());
    d->process.start(ffmpeg, args);
    if (!d->process.waitForStarted(kStartMs))
        return Error(ErrorCode::Io, QStringLiteral("cannot start %1: %2").arg(ffmpeg, d->process.errorString()));
    return std::unique_ptr<VideoWriter>(new VideoWriter(std::move(d)));
}

Error VideoWriter::addFrame(const unsigned char *rgb, int bytesPerLine, int width, int height)
{
    if (d->finished)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the video is finished"));
    if (width != d->width || height != d->height)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("a frame of %1 × %2 in a video of %3 × %4").arg(width).arg(height).arg(d->width).arg(d->height));
    if (bytesPerLine < width * 3)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("rows of %1 bytes for %2 RGB pixels").arg(bytesPerLine).arg(width));
    QByteArray frame;
    frame.reserve(qsizetype(width) * height * 3);
    for (int y = 0; y < height; ++y)
        frame.append(reinterpret_cast<const char *>(rgb) + qsizetype(y) * bytesPerLine, qsizetype(width) * 3);
    if (d->process.state() != QProcess::Running || d->process.write(frame) != frame.size())
        return d->failure(QStringLiteral("the encoder stopped"));
    while (d->process.bytesToWrite() > 0)
        if (!d->process.waitForBytesWritten(kFrameMs))
            return d->failure(QStringLiteral("the encoder took no frame"));
    return Error();
}

Error VideoWriter::finish()
{
    if (d->finished)
        return Error();
    d->process.closeWriteChannel();
    if (!d->process.waitForFinished(kFinishMs))
        return d->failure(QStringLiteral("the encoder did not finish"));
    if (d->process.exitStatus() != QProcess::NormalExit || d->process.exitCode() != 0)
        return d->failure(QStringLiteral("the encoder failed (exit %1)").arg(d->process.exitCode()));
    d->finished = true;
    QFile::remove(d->path);
    if (!QFile::rename(d->partial, d->path)) {
        QFile::remove(d->partial);
        return Error(ErrorCode::Io, QStringLiteral("cannot write %1").arg(d->path));
    }
    return Error();
}

} // namespace spectrum

#include "spectrum/imaging/videowriter.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <cmath>
#include <cstring>

namespace spectrum {

namespace {

Error ffError(int code, const QString &what)
{
    char text[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(code, text, sizeof text);
    return Error(ErrorCode::Io, QStringLiteral("%1: %2").arg(what, QString::fromLocal8Bit(text)));
}

} // namespace

struct VideoWriter::Private
{
    AVFormatContext *format = nullptr;
    AVCodecContext *codec = nullptr;
    AVStream *stream = nullptr;
    AVFrame *frame = nullptr;
    AVPacket *packet = nullptr;
    SwsContext *scale = nullptr;
    int width = 0, height = 0;   ///< of the frames given
    int64_t next = 0;
    bool finished = false;
    QString codecName;

    ~Private()
    {
        sws_freeContext(scale);
        av_packet_free(&packet);
        av_frame_free(&frame);
        avcodec_free_context(&codec);
        if (format) {
            if (!(format->oformat->flags & AVFMT_NOFILE) && format->pb)
                avio_closep(&format->pb);
            avformat_free_context(format);
        }
    }

    /// Sends `f` (null: the end) and writes what the encoder gives back.
    Error drain(AVFrame *f)
    {
        int r = avcodec_send_frame(codec, f);
        if (r < 0)
            return ffError(r, QStringLiteral("cannot encode a frame"));
        while (true) {
            r = avcodec_receive_packet(codec, packet);
            if (r == AVERROR(EAGAIN) || r == AVERROR_EOF)
                return Error();
            if (r < 0)
                return ffError(r, QStringLiteral("cannot encode a frame"));
            av_packet_rescale_ts(packet, codec->time_base, stream->time_base);
            packet->stream_index = stream->index;
            r = av_interleaved_write_frame(format, packet);
            if (r < 0)
                return ffError(r, QStringLiteral("cannot write the video"));
        }
    }
};

VideoWriter::VideoWriter(std::unique_ptr<Private> p) : d(std::move(p)) {}

VideoWriter::~VideoWriter() = default;

Result<std::unique_ptr<VideoWriter>> VideoWriter::open(const QString &path, int width, int height, double framesPerSecond)
{
    if (width < 1 || height < 1 || width > 8192 || height > 8192)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("a video of %1 × %2 pixels is not made").arg(width).arg(height));
    if (!(framesPerSecond >= 0.1 && framesPerSecond <= 120))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("%1 frames per second is not a rate for a cine").arg(framesPerSecond));
    av_log_set_level(AV_LOG_ERROR);  // the encoder's statistics are not the caller's business; errors come back as Error
    auto d = std::make_unique<Private>();
    d->width = width;
    d->height = height;
    const QByteArray file = path.toLocal8Bit();
    int r = avformat_alloc_output_context2(&d->format, nullptr, "mp4", file.constData());
    if (r < 0 || !d->format)
        return ffError(r, QStringLiteral("cannot make an MP4 file"));
    const AVCodec *encoder = avcodec_find_encoder_by_name("libx264");
    if (!encoder)
        encoder = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    if (!encoder)
        return Error(ErrorCode::Unsupported, QStringLiteral("this FFmpeg has neither an H.264 nor an MPEG-4 encoder"));
    d->codecName = QString::fromLatin1(encoder->name);
    d->stream = avformat_new_stream(d->format, nullptr);
    d->codec = avcodec_alloc_context3(encoder);
    if (!d->stream || !d->codec)
        return Error(ErrorCode::Internal, QStringLiteral("cannot make the encoder"));
    // Even sizes for 4:2:0; the rate as a fraction of a millisecond clock.
    d->codec->width = (width + 1) / 2 * 2;
    d->codec->height = (height + 1) / 2 * 2;
    d->codec->pix_fmt = AV_PIX_FMT_YUV420P;
    d->codec->time_base = AVRational{1000, int(std::lround(framesPerSecond * 1000))};
    d->codec->framerate = AVRational{int(std::lround(framesPerSecond * 1000)), 1000};
    d->codec->gop_size = 12;
    if (d->codecName == QLatin1String("libx264"))
        av_opt_set(d->codec->priv_data, "crf", "18", 0);  // visually lossless for greyscale images
    else
        d->codec->bit_rate = 8000000;
    if (d->format->oformat->flags & AVFMT_GLOBALHEADER)
        d->codec->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if ((r = avcodec_open2(d->codec, encoder, nullptr)) < 0)
        return ffError(r, QStringLiteral("cannot open the %1 encoder").arg(d->codecName));
    if ((r = avcodec_parameters_from_context(d->stream->codecpar, d->codec)) < 0)
        return ffError(r, QStringLiteral("cannot describe the video"));
    d->stream->time_base = d->codec->time_base;
    d->stream->avg_frame_rate = d->codec->framerate;  // said in the file: players and ffprobe read the rate, not guess it
    d->stream->r_frame_rate = d->codec->framerate;
    if ((r = avio_open(&d->format->pb, file.constData(), AVIO_FLAG_WRITE)) < 0)
        return ffError(r, QStringLiteral("cannot write %1").arg(path));
    if ((r = avformat_write_header(d->format, nullptr)) < 0)
        return ffError(r, QStringLiteral("cannot write the MP4 header"));
    d->frame = av_frame_alloc();
    d->packet = av_packet_alloc();
    if (!d->frame || !d->packet)
        return Error(ErrorCode::Internal, QStringLiteral("cannot make the encoder's frames"));
    d->frame->format = d->codec->pix_fmt;
    d->frame->width = d->codec->width;
    d->frame->height = d->codec->height;
    if ((r = av_frame_get_buffer(d->frame, 0)) < 0)
        return ffError(r, QStringLiteral("cannot make the encoder's frames"));
    d->scale = sws_getContext(width, height, AV_PIX_FMT_RGB24, width, height, AV_PIX_FMT_YUV420P, SWS_BICUBIC, nullptr, nullptr, nullptr);
    if (!d->scale)
        return Error(ErrorCode::Unsupported, QStringLiteral("cannot convert RGB to YUV"));
    return std::unique_ptr<VideoWriter>(new VideoWriter(std::move(d)));
}

Error VideoWriter::addFrame(const unsigned char *rgb, int bytesPerLine, int width, int height)
{
    if (d->finished)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the video is finished"));
    if (width != d->width || height != d->height)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("a frame of %1 × %2 in a video of %3 × %4").arg(width).arg(height).arg(d->width).arg(d->height));
    int r = av_frame_make_writable(d->frame);
    if (r < 0)
        return ffError(r, QStringLiteral("cannot reuse the encoder's frame"));
    // Black first: an odd size's extra column or row stays black.
    for (int plane = 0; plane < 3; ++plane) {
        const int rows = plane == 0 ? d->frame->height : (d->frame->height + 1) / 2;
        std::memset(d->frame->data[plane], plane == 0 ? 16 : 128, size_t(d->frame->linesize[plane]) * size_t(rows));
    }
    const uint8_t *source[1] = {rgb};
    const int stride[1] = {bytesPerLine};
    sws_scale(d->scale, source, stride, 0, height, d->frame->data, d->frame->linesize);
    d->frame->pts = d->next++;
    return d->drain(d->frame);
}

Error VideoWriter::finish()
{
    if (d->finished)
        return Error();
    d->finished = true;
    if (Error e = d->drain(nullptr); e.isError())
        return e;
    const int r = av_write_trailer(d->format);
    if (r < 0)
        return ffError(r, QStringLiteral("cannot finish the MP4 file"));
    return Error();
}

} // namespace spectrum

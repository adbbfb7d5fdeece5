#pragma once
// VideoWriter: frames (8-bit RGB) into an MP4 file — H.264 through FFmpeg's libraries from Debian (libx264), MPEG-4
// Part 2 where H.264 is not built in — for a cine that plays in any browser or slide program. FFmpeg stays inside;
// callers speak bytes. Odd sizes are made even (a column or row of black), as 4:2:0 needs.

#include "spectrum/core/result.h"

#include <QString>

#include <memory>

namespace spectrum {

class VideoWriter
{
public:
    ~VideoWriter();
    VideoWriter(const VideoWriter &) = delete;
    VideoWriter &operator=(const VideoWriter &) = delete;

    /// An MP4 file at `path` of frames `width` × `height` at `framesPerSecond` (0.1 – 120).
    static Result<std::unique_ptr<VideoWriter>> open(const QString &path, int width, int height, double framesPerSecond);
    /// The next frame: `width` × `height` RGB pixels, rows `bytesPerLine` apart (the size given to open()).
    Error addFrame(const unsigned char *rgb, int bytesPerLine, int width, int height);
    /// Flushes the encoder and writes the file's index; the file is complete only after this.
    Error finish();

private:
    struct Private;
    explicit VideoWriter(std::unique_ptr<Private> d);
    std::unique_ptr<Private> d;
};

} // namespace spectrum

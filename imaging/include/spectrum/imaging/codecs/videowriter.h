// SPDX-License-Identifier: Apache-2.0
#pragma once
// VideoWriter: frames (8-bit RGB) into an MP4 file — H.264 (MPEG-4 Part 2 where that encoder is missing) — for a
// cine that plays in any browser or slide program. The frames go to the `ffmpeg` program through a pipe: Spectrum
// runs FFmpeg, it does not link it (Debian builds FFmpeg's libraries GPL; Spectrum is Apache-2.0). Odd sizes are
// made even (a column or row of black), as 4:2:0 needs. The file appears at its path only once finished whole.

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

    /// The `ffmpeg` program cines are made with (SPECTRUM_FFMPEG, else `ffmpeg` on PATH); empty when there is none.
    static QString program();
    /// An MP4 file at `path` of frames `width` × `height` at `framesPerSecond` (0.1 – 120). Blocks on the program's
    /// start: call it off the GUI thread.
    static Result<std::unique_ptr<VideoWriter>> open(const QString &path, int width, int height, double framesPerSecond);
    /// The next frame: `width` × `height` RGB pixels, rows `bytesPerLine` apart (the size given to open()).
    Error addFrame(const unsigned char *rgb, int bytesPerLine, int width, int height);
    /// Waits for the encoder and puts the file in place; the file exists only after this succeeded. A writer
    /// destroyed unfinished leaves nothing behind.
    Error finish();

private:
    struct Private;
    explicit VideoWriter(std::unique_ptr<Private> d);
    std::unique_ptr<Private> d;
};

} // namespace spectrum

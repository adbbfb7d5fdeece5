// SPDX-License-Identifier: Apache-2.0
#include "codecs/jpeg2000.h"

#include "spectrum/core/result.h"

#include <openjpeg.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

namespace spectrum::jpeg2000 {

namespace {

struct Memory
{
    const uchar *data;
    OPJ_SIZE_T size;
    OPJ_SIZE_T position;
};

OPJ_SIZE_T readMemory(void *buffer, OPJ_SIZE_T bytes, void *user)
{
    auto *m = static_cast<Memory *>(user);
    if (m->position >= m->size)
        return OPJ_SIZE_T(-1);
    const OPJ_SIZE_T n = std::min(bytes, m->size - m->position);
    std::memcpy(buffer, m->data + m->position, n);
    m->position += n;
    return n;
}

OPJ_OFF_T skipMemory(OPJ_OFF_T bytes, void *user)
{
    auto *m = static_cast<Memory *>(user);
    const OPJ_OFF_T target = std::clamp<OPJ_OFF_T>(OPJ_OFF_T(m->position) + bytes, 0, OPJ_OFF_T(m->size));
    const OPJ_OFF_T moved = target - OPJ_OFF_T(m->position);
    m->position = OPJ_SIZE_T(target);
    return moved;
}

OPJ_BOOL seekMemory(OPJ_OFF_T to, void *user)
{
    auto *m = static_cast<Memory *>(user);
    if (to < 0 || OPJ_SIZE_T(to) > m->size)
        return OPJ_FALSE;
    m->position = OPJ_SIZE_T(to);
    return OPJ_TRUE;
}

void collect(const char *message, void *user)
{
    auto *text = static_cast<QString *>(user);
    if (text->isEmpty())
        *text = QString::fromLocal8Bit(message).trimmed();
}

/// The samples into `out`, signed or not as Pixel Representation says (T's signedness). A stream whose signedness
/// disagrees holds the same bit patterns read the other way: each is read again as a `prec`-bit two's complement
/// number (signed) or as its `prec`-bit pattern (unsigned) — what pydicom does with such files. True when it did.
template <typename T>
bool copyGray(const opj_image_comp_t &c, T *out, qint64 count)
{
    const bool wantSigned = std::is_signed_v<T>;
    if (bool(c.sgnd) == wantSigned || c.prec < 1 || c.prec > 16) {
        for (qint64 i = 0; i < count; ++i)
            out[i] = T(c.data[i]);
        return false;
    }
    const OPJ_INT32 half = OPJ_INT32(1) << (c.prec - 1), full = half * 2;
    for (qint64 i = 0; i < count; ++i) {
        OPJ_INT32 v = c.data[i];
        if (wantSigned && v >= half)
            v -= full;
        else if (!wantSigned && v < 0)
            v += full;
        out[i] = T(v);
    }
    return true;
}

using Image = std::unique_ptr<opj_image_t, void (*)(opj_image_t *)>;

/// The frame decoded by OpenJPEG: its components as OpenJPEG gives them, or why not.
Result<Image> openFrame(const QByteArray &codestream)
{
    static const uchar jp2Signature[12] = {0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A};
    const bool jp2 = codestream.size() >= 12 && std::memcmp(codestream.constData(), jp2Signature, 12) == 0;
    if (!jp2 && (codestream.size() < 4 || uchar(codestream[0]) != 0xFF || uchar(codestream[1]) != 0x4F))
        return Error(ErrorCode::InvalidDicom, QStringLiteral("JPEG 2000: the frame is neither a J2K codestream nor a JP2 file"));

    Memory memory{reinterpret_cast<const uchar *>(codestream.constData()), OPJ_SIZE_T(codestream.size()), 0};
    std::unique_ptr<opj_stream_t, void (*)(opj_stream_t *)> stream(opj_stream_create(1 << 16, OPJ_TRUE), opj_stream_destroy);
    std::unique_ptr<opj_codec_t, void (*)(opj_codec_t *)> codec(opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K), opj_destroy_codec);
    if (!stream || !codec)
        return Error(ErrorCode::Internal, QStringLiteral("JPEG 2000: OpenJPEG could not be set up"));
    opj_stream_set_user_data(stream.get(), &memory, nullptr);
    opj_stream_set_user_data_length(stream.get(), memory.size);
    opj_stream_set_read_function(stream.get(), readMemory);
    opj_stream_set_skip_function(stream.get(), skipMemory);
    opj_stream_set_seek_function(stream.get(), seekMemory);
    QString failure;
    opj_set_error_handler(codec.get(), collect, &failure);
    opj_dparameters_t parameters;
    opj_set_default_decoder_parameters(&parameters);
    if (!opj_setup_decoder(codec.get(), &parameters))
        return Error(ErrorCode::Internal, QStringLiteral("JPEG 2000: decoder setup failed"));

    opj_image_t *raw = nullptr;
    const bool ok = opj_read_header(stream.get(), codec.get(), &raw) && opj_decode(codec.get(), stream.get(), raw) && opj_end_decompress(codec.get(), stream.get());
    Image image(raw, opj_image_destroy);
    if (!ok || !image)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("JPEG 2000: cannot decode the frame%1").arg(failure.isEmpty() ? QString() : QStringLiteral(": ") + failure));
    return Result<Image>(std::move(image));
}

/// Whether the first `components` components of `image` are `width` × `height`, each at most `limit` bits deep.
Error checkComponents(const opj_image_t &image, OPJ_UINT32 components, int width, int height, int limit, int bitsStored)
{
    if (image.numcomps < components)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("JPEG 2000: %1 component(s), the header says %2").arg(image.numcomps).arg(components));
    for (OPJ_UINT32 c = 0; c < components; ++c) {
        const opj_image_comp_t &comp = image.comps[c];
        if (int(comp.w) != width || int(comp.h) != height || comp.dx != 1 || comp.dy != 1 || !comp.data)
            return Error(ErrorCode::InvalidDicom, QStringLiteral("JPEG 2000: a %1 × %2 component, the header says %3 × %4")
                                                      .arg(comp.w).arg(comp.h).arg(width).arg(height));
        if (int(comp.prec) > limit || comp.prec < 1)
            return Error(ErrorCode::InvalidDicom, QStringLiteral("JPEG 2000: %1-bit samples, the header says %2").arg(comp.prec).arg(bitsStored));
    }
    return Error();
}

} // namespace

Error decodeColourFrameFull(const QByteArray &codestream, int width, int height, quint16 *out, int *precision)
{
    Result<Image> opened = openFrame(codestream);
    if (!opened.isOk())
        return opened.error();
    const opj_image_t &image = *opened.value();
    if (Error e = checkComponents(image, 3, width, height, 16, 16); e.isError())
        return e;
    const int prec = int(image.comps[0].prec);
    if (image.comps[0].sgnd || image.comps[1].sgnd || image.comps[2].sgnd)
        return Error(ErrorCode::Unsupported, QStringLiteral("JPEG 2000 colour of signed samples"));
    if (image.comps[1].prec != image.comps[0].prec || image.comps[2].prec != image.comps[0].prec)
        return Error(ErrorCode::InvalidDicom, QStringLiteral("JPEG 2000: colour components of %1, %2 and %3 bits").arg(image.comps[0].prec).arg(image.comps[1].prec).arg(image.comps[2].prec));
    const qint64 count = qint64(width) * height;
    const int top = (1 << prec) - 1;
    for (int c = 0; c < 3; ++c)
        for (qint64 i = 0; i < count; ++i)
            out[3 * i + c] = quint16(std::clamp(image.comps[c].data[i], 0, top));
    if (precision)
        *precision = prec;
    return Error();
}

Error decodeFrame(const QByteArray &codestream, int width, int height, PixelFormat format, int bitsStored, uchar *out, int *streamPrecision,
                  bool *signReread)
{
    Result<Image> opened = openFrame(codestream);
    if (!opened.isOk())
        return opened.error();
    const Image &image = opened.value();
    const bool rgb = format == PixelFormat::Rgb24;
    const OPJ_UINT32 components = rgb ? 3 : 1;
    // The stream's precision rules when it differs from the header's (OpenJPEG decodes what is there); only samples
    // deeper than the buffer holds are refused (colour: scaled to 8 bits below).
    if (Error e = checkComponents(*image, components, width, height, rgb ? 16 : PixelBuffer::bytesPerPixel(format) * 8, bitsStored); e.isError())
        return e;
    if (streamPrecision)
        *streamPrecision = int(image->comps[0].prec);
    const qint64 count = qint64(width) * height;
    bool reread = false;
    switch (format) {
    case PixelFormat::Gray8:
        reread = copyGray(image->comps[0], reinterpret_cast<quint8 *>(out), count);
        break;
    case PixelFormat::Gray8Signed:
        reread = copyGray(image->comps[0], reinterpret_cast<qint8 *>(out), count);
        break;
    case PixelFormat::Gray16:
        reread = copyGray(image->comps[0], reinterpret_cast<quint16 *>(out), count);
        break;
    case PixelFormat::Gray16Signed:
        reread = copyGray(image->comps[0], reinterpret_cast<qint16 *>(out), count);
        break;
    case PixelFormat::Rgb24:
        for (int c = 0; c < 3; ++c) {
            const int shift = std::max(0, int(image->comps[c].prec) - 8);
            const int top = (1 << std::min(int(image->comps[c].prec), 8)) - 1;
            for (qint64 i = 0; i < count; ++i)
                out[3 * i + c] = uchar(std::clamp(image->comps[c].data[i] >> shift, 0, top));
        }
        break;
    case PixelFormat::Float64:
        return Error(ErrorCode::Unsupported, QStringLiteral("JPEG 2000 with 32-bit samples"));
    }
    if (signReread)
        *signReread = reread;
    return Error();
}

} // namespace spectrum::jpeg2000

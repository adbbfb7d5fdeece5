// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/error.h"

namespace spectrum {

QString Error::codeName(ErrorCode code)
{
    switch (code) {
    case ErrorCode::None: return QStringLiteral("no error");
    case ErrorCode::Cancelled: return QStringLiteral("cancelled");
    case ErrorCode::InvalidArgument: return QStringLiteral("invalid argument");
    case ErrorCode::InvalidKey: return QStringLiteral("invalid key");
    case ErrorCode::NotFound: return QStringLiteral("not found");
    case ErrorCode::OutOfRange: return QStringLiteral("out of range");
    case ErrorCode::Io: return QStringLiteral("i/o error");
    case ErrorCode::DiskFull: return QStringLiteral("disk full");
    case ErrorCode::Corrupt: return QStringLiteral("corrupt data");
    case ErrorCode::Timeout: return QStringLiteral("timeout");
    case ErrorCode::Network: return QStringLiteral("network error");
    case ErrorCode::Protocol: return QStringLiteral("protocol error");
    case ErrorCode::Authentication: return QStringLiteral("authentication failed");
    case ErrorCode::Unsupported: return QStringLiteral("unsupported");
    case ErrorCode::InvalidDicom: return QStringLiteral("invalid DICOM");
    case ErrorCode::Busy: return QStringLiteral("busy");
    case ErrorCode::Changed: return QStringLiteral("changed");
    case ErrorCode::NotAllowed: return QStringLiteral("not allowed");
    case ErrorCode::Internal: return QStringLiteral("internal error");
    }
    return QStringLiteral("unknown error");
}

QString Error::toString() const
{
    if (!isError())
        return codeName(m_code);
    return m_message.isEmpty() ? codeName(m_code) : codeName(m_code) + QStringLiteral(": ") + m_message;
}

Error Error::withContext(const QString &context) const
{
    if (!isError() || context.isEmpty())
        return *this;
    return Error(m_code, context + QStringLiteral(": ") + m_message);
}

Error Error::fromDcmtkCondition(unsigned short module, unsigned short code, const char *text, const QString &context)
{
    // Module and code numbers from DCMTK's ofcond.h, dcerror.h and dcerror.cc (stable across 3.6.x).
    constexpr unsigned short ofstdModule = 0;
    constexpr unsigned short dcmdataModule = 1;
    constexpr unsigned short dcmjpegModule = 5;
    constexpr unsigned short dcmnetModule = 6;
    constexpr unsigned short dcmjplsModule = 19;

    const QString what = QString::fromLocal8Bit(text ? text : "unknown DCMTK condition");
    const QString message = context.isEmpty() ? what : context + QStringLiteral(": ") + what;
    if (module == ofstdModule && code == 0)
        return Error();  // EC_Normal

    ErrorCode ours = ErrorCode::InvalidDicom;
    if (module == ofstdModule) {
        ours = ErrorCode::Io;  // file names, directories, temporary files, memory
    } else if (module == dcmdataModule) {
        switch (code) {
        case 2:   // EC_TagNotFound
        case 43:  // EC_ItemNotFound
            ours = ErrorCode::NotFound; break;
        case 7:   // EC_IllegalCall
        case 48:  // EC_InternalError
            ours = ErrorCode::Internal; break;
        case 13:  // EC_RepresentationNotFound
        case 14:  // EC_CannotChangeRepresentation: no decoder for the transfer syntax
        case 15:  // EC_UnsupportedEncoding
        case 44:  // EC_UnknownTransferSyntax
            ours = ErrorCode::Unsupported; break;
        case 18:  // file read errors
        case 19:  // file write errors
            ours = ErrorCode::Io; break;
        default:  // EC_InvalidStream, EC_StreamNotifyClient (truncated), EC_CorruptedData, EC_UnknownVR…
            ours = ErrorCode::InvalidDicom; break;
        }
    } else if (module == dcmnetModule) {
        ours = ErrorCode::Network;
    } else if (module == dcmjpegModule || module == dcmjplsModule) {
        ours = ErrorCode::InvalidDicom;  // a broken compressed stream
    }
    return Error(ours, message);
}

} // namespace spectrum

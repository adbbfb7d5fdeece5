// SPDX-License-Identifier: Apache-2.0
#include "blobtarget.h"

#include "spectrum/core/privatefile.h"

#include <QFile>
#include <QUrl>

namespace spectrum::cli {

void addTransferOptions(QCommandLineParser &p)
{
    p.addOption({QStringLiteral("token-file"), QStringLiteral("File holding the server's token (default: $SPECTRUM_TOKEN)."), QStringLiteral("FILE")});
    p.addOption({QStringLiteral("streams"), QStringLiteral("Data connections, or auto: two on a LAN, four on a longer path, doubled while the rate grows with them (default)."), QStringLiteral("N|auto"), QStringLiteral("auto")});
    p.addOption({QStringLiteral("chunk"), QStringLiteral("Chunk size in KiB (default 4096)."), QStringLiteral("KIB"), QStringLiteral("4096")});
    p.addOption({QStringLiteral("ca-file"), QStringLiteral("PEM certificates to trust for blobs:// (besides the system's)."), QStringLiteral("FILE")});
    p.addOption({QStringLiteral("timeout"), QStringLiteral("Seconds without progress before a connection counts as failed (default 30)."), QStringLiteral("S"), QStringLiteral("30")});
}

Result<BlobTarget> target(const QCommandLineParser &p, const QString &url)
{
    auto parsed = BlobEndpoint::fromUrl(QUrl(url));
    if (!parsed.isOk())
        return parsed.error();
    BlobEndpoint ep = parsed.value().first;
    if (p.isSet(QStringLiteral("token-file"))) {
        Result<QByteArray> token = readPrivateFile(p.value(QStringLiteral("token-file")), QStringLiteral("the token file"));
        if (!token.isOk())
            return token.error();
        ep.token = QString::fromUtf8(token.value()).trimmed();
    } else {
        ep.token = qEnvironmentVariable("SPECTRUM_TOKEN");
    }
    ep.caFile = p.value(QStringLiteral("ca-file"));
    BlobTarget t;
    t.client = std::make_unique<BlobClient>(ep);
    TransferOptions o;
    const QString streams = p.value(QStringLiteral("streams"));
    o.streams = streams == QLatin1String("auto") ? 0 : streams.toInt();
    o.chunkSize = p.value(QStringLiteral("chunk")).toLongLong() * 1024;
    o.timeoutMs = p.value(QStringLiteral("timeout")).toInt() * 1000;
    if ((o.streams < 1 && streams != QLatin1String("auto")) || o.chunkSize < 4096 || o.timeoutMs < 1000)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("--streams N (≥ 1) or auto, --chunk ≥ 4 KiB and --timeout ≥ 1 s"));
    t.client->setDefaults(o);
    t.key = parsed.value().second;
    return t;
}

} // namespace spectrum::cli

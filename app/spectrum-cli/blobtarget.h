// SPDX-License-Identifier: Apache-2.0
#pragma once
// spectrum-cli: a blob:// URL and the transfer options of the command line, made into a client and a key.

#include "spectrum/core/result.h"
#include "spectrum/transfer/blobclient.h"

#include <QCommandLineParser>

#include <memory>

namespace spectrum::cli {

/// --token-file, --streams, --chunk, --ca-file, --timeout.
void addTransferOptions(QCommandLineParser &p);

struct BlobTarget
{
    std::unique_ptr<BlobClient> client;
    QString key;
};

/// The client for `url` with the options of `p`.
Result<BlobTarget> target(const QCommandLineParser &p, const QString &url);

} // namespace spectrum::cli

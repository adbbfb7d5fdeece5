// SPDX-License-Identifier: Apache-2.0
#pragma once
// spectrum-cli: get, put, stat and ls of s3://BUCKET/KEY, and the uploads left unfinished there (s3commands.cpp). The blob commands hand over to these
// when their address is an s3:// one.

#include <QStringList>

namespace spectrum::cli {

/// Whether the command's first argument that is not an option is an s3:// address.
bool isS3Url(const QStringList &args);
int s3Get(const QStringList &args);
int s3Put(const QStringList &args);
int s3Stat(const QStringList &args);
int s3Ls(const QStringList &args);
/// `spectrum-cli uploads s3://BUCKET/PREFIX [--abort]`: multipart uploads left unfinished, listed or aborted.
int s3Uploads(const QStringList &args);

} // namespace spectrum::cli

// SPDX-License-Identifier: Apache-2.0
#pragma once
// AWS Signature Version 4 for S3 (the "s3" service): what every S3-compatible store — AWS, Ceph RGW, Garage,
// versitygw — checks on each request. Written here over Qt and OpenSSL because no S3 library in Debian 12 signs
// this way; checked against botocore's signer with a fixed date and against a real server (tests).
//
// A request is signed over its method, its path and query (each part percent-encoded as RFC 3986 says, '/' kept
// in the path), the headers named in SignedHeaders (host and every x-amz-* at least), and the payload's SHA-256 —
// or the literal UNSIGNED-PAYLOAD, which S3 accepts over TLS, where the channel already protects the bytes.
//
// The secret key goes into the signing key only: never into a header, URL, error or log.

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QPair>
#include <QString>

namespace spectrum::s3 {

/// The payload hash of a request whose body is not hashed (S3 over TLS).
inline constexpr char kUnsignedPayload[] = "UNSIGNED-PAYLOAD";

/// Lowercase hex of the SHA-256 of `bytes`: a payload hash.
QByteArray payloadHash(const QByteArray &bytes);

/// RFC 3986 percent-encoding as SigV4 wants it: unreserved characters (A–Z a–z 0–9 - _ . ~) as they are, every
/// other byte of the UTF-8 as %XX (upper case); '/' kept when `keepSlash` (an object key in a path).
QByteArray uriEncode(const QString &text, bool keepSlash);

struct Credentials
{
    QString accessKey;
    QString secretKey;
    QString region = QStringLiteral("us-east-1");
    /// Temporary credentials (an STS session): sent as x-amz-security-token, signed with the request.
    QString sessionToken;
};

struct RequestToSign
{
    QByteArray method;                            ///< GET, PUT, HEAD, POST, DELETE
    QByteArray host;                              ///< as sent in Host: name, and ":port" when not the scheme's default
    QByteArray encodedPath;                       ///< already encoded (uriEncode of each part), starting with '/'
    QList<QPair<QString, QString>> query;         ///< decoded names and values; encoded and sorted when signing
    QList<QPair<QByteArray, QByteArray>> headers; ///< more headers to sign (range, if-match, content-type, x-amz-*)
    QByteArray payloadHash = kUnsignedPayload;
};

struct Signed
{
    QByteArray authorization;  ///< the Authorization header's value
    QByteArray amzDate;        ///< x-amz-date, e.g. 20261125T120000Z
    QByteArray contentSha256;  ///< x-amz-content-sha256 (the payload hash as signed)
    QByteArray canonicalRequest;  ///< for tests and for explaining a SignatureDoesNotMatch
    QByteArray encodedQuery;      ///< the query as signed, to send exactly so
};

/// Signs `request` at `when` (UTC) with `credentials`.
Signed sign(const RequestToSign &request, const Credentials &credentials, const QDateTime &when);

} // namespace spectrum::s3

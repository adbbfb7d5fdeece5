// SPDX-License-Identifier: Apache-2.0
#include "spectrum/transfer/s3signer.h"

#include "spectrum/transfer/sha256.h"

#include <QCryptographicHash>
#include <QMessageAuthenticationCode>

#include <algorithm>
#include <map>

namespace spectrum::s3 {

namespace {

QByteArray hmac(const QByteArray &key, const QByteArray &message)
{
    return QMessageAuthenticationCode::hash(message, key, QCryptographicHash::Sha256);
}

/// A header value as SigV4 canonicalises it: trimmed, runs of spaces one space.
QByteArray canonicalValue(const QByteArray &value)
{
    QByteArray out;
    out.reserve(value.size());
    bool space = false;
    for (char c : value.trimmed()) {
        if (c == ' ' || c == '\t') {
            space = true;
            continue;
        }
        if (space)
            out += ' ';
        space = false;
        out += c;
    }
    return out;
}

} // namespace

QByteArray payloadHash(const QByteArray &bytes)
{
    // OpenSSL's (the CPU's SHA instructions): a part of 16 MiB is hashed here; Qt's own SHA-256 took ten times as
    // long, and with the checksum and the composite's digest it held PUTs to ~60 MB/s on one core.
    return Sha256::hash(bytes.constData(), bytes.size()).toHex();
}

QByteArray uriEncode(const QString &text, bool keepSlash)
{
    static const char hex[] = "0123456789ABCDEF";
    const QByteArray utf8 = text.toUtf8();
    QByteArray out;
    out.reserve(utf8.size() * 3);
    for (char ch : utf8) {
        const auto c = uchar(ch);
        const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
        if (unreserved || (keepSlash && c == '/')) {
            out += char(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

Signed sign(const RequestToSign &request, const Credentials &credentials, const QDateTime &when)
{
    Signed s;
    const QDateTime utc = when.toUTC();
    s.amzDate = utc.toString(QStringLiteral("yyyyMMdd'T'HHmmss'Z'")).toLatin1();
    const QByteArray day = s.amzDate.left(8);
    s.contentSha256 = request.payloadHash;

    // Query: names and values encoded, sorted by name then value.
    QList<QPair<QByteArray, QByteArray>> query;
    for (const auto &[name, value] : request.query)
        query << qMakePair(uriEncode(name, false), uriEncode(value, false));
    std::sort(query.begin(), query.end());
    QList<QByteArray> pairs;
    for (const auto &[name, value] : query)
        pairs << name + '=' + value;
    s.encodedQuery = pairs.join('&');

    // Headers: lower-case names, sorted; a name given twice has its values joined by commas.
    std::map<QByteArray, QByteArray> headers;
    auto add = [&](const QByteArray &name, const QByteArray &value) {
        QByteArray &v = headers[name.toLower()];
        v = v.isEmpty() ? canonicalValue(value) : v + ',' + canonicalValue(value);
    };
    add("host", request.host);
    add("x-amz-date", s.amzDate);
    add("x-amz-content-sha256", request.payloadHash);
    for (const auto &[name, value] : request.headers)
        add(name, value);
    QByteArray canonicalHeaders, signedHeaders;
    for (const auto &[name, value] : headers) {
        canonicalHeaders += name + ':' + value + '\n';
        signedHeaders += (signedHeaders.isEmpty() ? QByteArray() : QByteArray(";")) + name;
    }

    s.canonicalRequest = request.method + '\n' + (request.encodedPath.isEmpty() ? QByteArray("/") : request.encodedPath) + '\n' + s.encodedQuery + '\n'
        + canonicalHeaders + '\n' + signedHeaders + '\n' + request.payloadHash;
    const QByteArray scope = day + '/' + credentials.region.toUtf8() + "/s3/aws4_request";
    const QByteArray stringToSign = "AWS4-HMAC-SHA256\n" + s.amzDate + '\n' + scope + '\n'
        + QCryptographicHash::hash(s.canonicalRequest, QCryptographicHash::Sha256).toHex();
    const QByteArray key = hmac(hmac(hmac(hmac("AWS4" + credentials.secretKey.toUtf8(), day), credentials.region.toUtf8()), "s3"), "aws4_request");
    const QByteArray signature = hmac(key, stringToSign).toHex();
    s.authorization = "AWS4-HMAC-SHA256 Credential=" + credentials.accessKey.toUtf8() + '/' + scope + ", SignedHeaders=" + signedHeaders
        + ", Signature=" + signature;
    return s;
}

} // namespace spectrum::s3

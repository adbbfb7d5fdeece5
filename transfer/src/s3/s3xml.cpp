// SPDX-License-Identifier: Apache-2.0
// What S3 answers in XML: ListObjectsV2 pages and error bodies, read with QXmlStreamReader (no DTDs, no entities
// beyond XML's own), and S3 errors turned into ours.

#include "spectrum/transfer/s3client.h"

#include <QCryptographicHash>
#include <QXmlStreamReader>

#include <algorithm>
#include <optional>
#include <initializer_list>

namespace spectrum::s3 {

namespace {

constexpr int kMaxListed = 100000;  // far beyond any page S3 sends (1,000): a hostile answer stops here

/// The text of the current element (reader at its start), its children's text ignored.
QString textOf(QXmlStreamReader &xml)
{
    return xml.readElementText(QXmlStreamReader::SkipChildElements);
}

} // namespace

Result<S3Listing> parseListing(const QByteArray &bytes)
{
    QXmlStreamReader xml(bytes);
    S3Listing listing;
    bool root = false;
    while (xml.readNextStartElement()) {
        if (!root) {
            if (xml.name() != QLatin1String("ListBucketResult"))
                return Error(ErrorCode::Protocol, QStringLiteral("the store's listing is not a ListBucketResult (it is <%1>)").arg(xml.name().toString().left(64)));
            root = true;
            continue;  // into its children
        }
        if (xml.name() == QLatin1String("Contents")) {
            if (listing.objects.size() >= kMaxListed)
                return Error(ErrorCode::Protocol, QStringLiteral("the store's listing holds more than %1 objects in one page").arg(kMaxListed));
            S3Object o;
            bool sized = false;
            while (xml.readNextStartElement()) {
                if (xml.name() == QLatin1String("Key")) {
                    o.key = textOf(xml);
                } else if (xml.name() == QLatin1String("Size")) {
                    bool ok = false;
                    o.size = textOf(xml).toLongLong(&ok);
                    if (!ok || o.size < 0)
                        return Error(ErrorCode::Protocol, QStringLiteral("the store's listing gives an object a size that is not a number"));
                    sized = true;
                } else if (xml.name() == QLatin1String("ETag")) {
                    o.etag = textOf(xml).toUtf8();
                } else if (xml.name() == QLatin1String("LastModified")) {
                    o.lastModified = QDateTime::fromString(textOf(xml), Qt::ISODateWithMs);
                } else {
                    xml.skipCurrentElement();
                }
            }
            if (o.key.isEmpty() || !sized)
                return Error(ErrorCode::Protocol, QStringLiteral("the store's listing has an object without a key or size"));
            listing.objects << o;
        } else if (xml.name() == QLatin1String("CommonPrefixes")) {
            while (xml.readNextStartElement()) {
                if (xml.name() == QLatin1String("Prefix") && listing.prefixes.size() < kMaxListed)
                    listing.prefixes << textOf(xml);
                else
                    xml.skipCurrentElement();
            }
        } else if (xml.name() == QLatin1String("IsTruncated")) {
            listing.truncated = textOf(xml).trimmed() == QLatin1String("true");
        } else if (xml.name() == QLatin1String("NextContinuationToken")) {
            listing.nextToken = textOf(xml);
        } else {
            xml.skipCurrentElement();
        }
    }
    if (xml.hasError())
        return Error(ErrorCode::Protocol, QStringLiteral("the store's listing is not well-formed XML: %1").arg(xml.errorString()));
    if (!root)
        return Error(ErrorCode::Protocol, QStringLiteral("the store's listing is empty"));
    if (listing.truncated && listing.nextToken.isEmpty())
        return Error(ErrorCode::Protocol, QStringLiteral("the store's listing is cut short without saying where to go on"));
    return listing;
}

S3ErrorAnswer parseError(const QByteArray &bytes)
{
    QXmlStreamReader xml(bytes);
    S3ErrorAnswer e;
    if (!xml.readNextStartElement())
        return e;
    // STS and the other query APIs wrap it: <ErrorResponse><Error>…</Error><RequestId/></ErrorResponse>.
    if (xml.name() == QLatin1String("ErrorResponse")) {
        while (xml.readNextStartElement() && xml.name() != QLatin1String("Error"))
            xml.skipCurrentElement();
    }
    if (xml.name() != QLatin1String("Error") || !xml.isStartElement())
        return e;
    while (xml.readNextStartElement()) {
        if (xml.name() == QLatin1String("Code"))
            e.code = textOf(xml).left(64);
        else if (xml.name() == QLatin1String("Message"))
            e.message = textOf(xml).left(300);
        else
            xml.skipCurrentElement();
    }
    if (xml.hasError())
        return S3ErrorAnswer();
    return e;
}

Result<QString> parseUploadId(const QByteArray &bytes)
{
    QXmlStreamReader xml(bytes);
    if (!xml.readNextStartElement() || xml.name() != QLatin1String("InitiateMultipartUploadResult"))
        return Error(ErrorCode::Protocol, QStringLiteral("the store's answer to starting an upload is not an InitiateMultipartUploadResult"));
    QString id;
    while (xml.readNextStartElement()) {
        if (xml.name() == QLatin1String("UploadId"))
            id = textOf(xml);
        else
            xml.skipCurrentElement();
    }
    if (xml.hasError() || id.isEmpty() || id.size() > 1024)
        return Error(ErrorCode::Protocol, QStringLiteral("the store's answer to starting an upload has no upload ID"));
    return id;
}

Result<S3Object> parseCompleted(const QByteArray &bytes)
{
    QXmlStreamReader xml(bytes);
    if (!xml.readNextStartElement())
        return Error(ErrorCode::Protocol, QStringLiteral("the store's answer to completing an upload is empty"));
    if (xml.name() == QLatin1String("Error")) {
        // A 200 that failed after all: busy (tried again), or a refusal of the parts as listed.
        const S3ErrorAnswer e = parseError(bytes);
        const bool busy = e.code == QLatin1String("InternalError") || e.code == QLatin1String("SlowDown");
        return Error(busy ? ErrorCode::Busy : ErrorCode::InvalidArgument, QStringLiteral("the store could not complete the upload (it said %1: %2)").arg(e.code, e.message));
    }
    if (xml.name() != QLatin1String("CompleteMultipartUploadResult"))
        return Error(ErrorCode::Protocol, QStringLiteral("the store's answer to completing an upload is not a CompleteMultipartUploadResult"));
    S3Object o;
    while (xml.readNextStartElement()) {
        if (xml.name() == QLatin1String("Key"))
            o.key = textOf(xml);
        else if (xml.name() == QLatin1String("ETag"))
            o.etag = textOf(xml).toUtf8().left(256);
        else if (xml.name() == QLatin1String("ChecksumSHA256"))
            o.checksumSha256 = textOf(xml).toUtf8().left(256);
        else
            xml.skipCurrentElement();
    }
    if (xml.hasError() || o.etag.isEmpty())
        return Error(ErrorCode::Protocol, QStringLiteral("the store's answer to completing an upload has no ETag"));
    return o;
}

Result<QList<QPair<QString, QString>>> parseUploads(const QByteArray &bytes)
{
    QXmlStreamReader xml(bytes);
    if (!xml.readNextStartElement() || xml.name() != QLatin1String("ListMultipartUploadsResult"))
        return Error(ErrorCode::Protocol, QStringLiteral("the store's list of uploads is not a ListMultipartUploadsResult"));
    QList<QPair<QString, QString>> uploads;
    while (xml.readNextStartElement()) {
        if (xml.name() != QLatin1String("Upload") || uploads.size() >= kMaxListed) {
            xml.skipCurrentElement();
            continue;
        }
        QString key, id;
        while (xml.readNextStartElement()) {
            if (xml.name() == QLatin1String("Key"))
                key = textOf(xml);
            else if (xml.name() == QLatin1String("UploadId"))
                id = textOf(xml);
            else
                xml.skipCurrentElement();
        }
        if (key.isEmpty() || id.isEmpty())
            return Error(ErrorCode::Protocol, QStringLiteral("the store's list of uploads has one without a key or ID"));
        uploads << qMakePair(key, id);
    }
    if (xml.hasError())
        return Error(ErrorCode::Protocol, QStringLiteral("the store's list of uploads is not well-formed XML: %1").arg(xml.errorString()));
    return uploads;
}

Result<S3PartListing> parseParts(const QByteArray &bytes)
{
    QXmlStreamReader xml(bytes);
    if (!xml.readNextStartElement() || xml.name() != QLatin1String("ListPartsResult"))
        return Error(ErrorCode::Protocol, QStringLiteral("the store's list of parts is not a ListPartsResult"));
    S3PartListing listing;
    while (xml.readNextStartElement()) {
        if (xml.name() == QLatin1String("IsTruncated")) {
            listing.truncated = textOf(xml) == QLatin1String("true");
        } else if (xml.name() == QLatin1String("NextPartNumberMarker")) {
            listing.nextMarker = textOf(xml).toInt();
        } else if (xml.name() == QLatin1String("Part") && listing.parts.size() < kMaxListed) {
            S3Part part;
            bool sized = false;
            while (xml.readNextStartElement()) {
                if (xml.name() == QLatin1String("PartNumber"))
                    part.number = textOf(xml).toInt();
                else if (xml.name() == QLatin1String("Size"))
                    part.size = textOf(xml).toLongLong(&sized);
                else if (xml.name() == QLatin1String("ETag"))
                    part.etag = textOf(xml).toUtf8().left(256);
                else if (xml.name() == QLatin1String("ChecksumSHA256"))
                    part.checksumSha256 = textOf(xml).toUtf8().left(256);
                else
                    xml.skipCurrentElement();
            }
            if (part.number < 1 || part.number > 10000 || !sized || part.size < 0 || part.etag.isEmpty())
                return Error(ErrorCode::Protocol, QStringLiteral("the store's list of parts has one without a number from 1 to 10000, a size or an ETag"));
            listing.parts << part;
        } else {
            xml.skipCurrentElement();
        }
    }
    if (xml.hasError())
        return Error(ErrorCode::Protocol, QStringLiteral("the store's list of parts is not well-formed XML: %1").arg(xml.errorString()));
    if (listing.truncated && (listing.nextMarker < 1 || listing.nextMarker >= 10000))
        return Error(ErrorCode::Protocol, QStringLiteral("the store's list of parts is cut short without saying where it goes on"));
    return listing;
}

QByteArray compositeChecksum(const QList<QByteArray> &partDigests)
{
    QCryptographicHash h(QCryptographicHash::Sha256);
    for (const QByteArray &d : partDigests)
        h.addData(d);
    return h.result().toBase64() + '-' + QByteArray::number(partDigests.size());
}

bool sameChecksum(const QByteArray &kept, const QByteArray &ours)
{
    auto split = [](const QByteArray &text) -> std::optional<std::pair<QByteArray, QByteArray>> {
        const QByteArray t = text.trimmed();
        const qsizetype dash = t.indexOf('-');
        const QByteArray::FromBase64Result digest =
            QByteArray::fromBase64Encoding(dash < 0 ? t : t.left(dash), QByteArray::AbortOnBase64DecodingErrors);
        if (!digest || digest.decoded.isEmpty())
            return std::nullopt;
        return std::make_pair(digest.decoded, dash < 0 ? QByteArray() : t.mid(dash));
    };
    const auto a = split(kept), b = split(ours);
    return a && b && *a == *b;
}

Error errorFor(int status, const QByteArray &body, const QString &what, const QString &bucket)
{
    const S3ErrorAnswer e = parseError(body);
    const QString said = e.code.isEmpty() ? QStringLiteral("HTTP %1").arg(status)
                                          : QStringLiteral("%1%2").arg(e.code, e.message.isEmpty() ? QString() : QStringLiteral(": ") + e.message.simplified());
    auto error = [&](ErrorCode code, const QString &meaning) { return Error(code, QStringLiteral("%1: %2 (the store said %3)").arg(what, meaning, said)); };
    const QString &c = e.code;
    auto is = [&](std::initializer_list<const char *> codes) {
        return std::any_of(codes.begin(), codes.end(), [&](const char *code) { return c == QLatin1String(code); });
    };
    if (is({"RequestTimeTooSkewed"}))
        return error(ErrorCode::Authentication, QStringLiteral("this workstation's clock is too far from the store's (more than 15 minutes): set its time"));
    if (is({"InvalidAccessKeyId", "XAdminUserNotFound"}))  // AWS's; versitygw's
        return error(ErrorCode::Authentication, QStringLiteral("the store does not know this access key"));
    if (is({"SignatureDoesNotMatch"}))
        return error(ErrorCode::Authentication, QStringLiteral("the store refused the signature: the secret key is wrong"));
    if (is({"AuthorizationHeaderMalformed"}))
        return error(ErrorCode::InvalidArgument, QStringLiteral("the store refused the request as signed: is the region the bucket's?"));
    if (is({"AccessDenied"}))
        return error(ErrorCode::Authentication, QStringLiteral("the store refused access"));
    if (c.isEmpty() && (status == 401 || status == 403))  // HEAD answers carry no body to say why
        return error(ErrorCode::Authentication, QStringLiteral("the store refused access (a wrong secret, an unknown access key, or this "
                                                                "workstation's clock more than 15 minutes off)"));
    if (is({"NoSuchBucket"}))
        return error(ErrorCode::NotFound, QStringLiteral("the bucket '%1' does not exist").arg(bucket));
    if (is({"NoSuchKey"}))
        return error(ErrorCode::NotFound, QStringLiteral("no such object"));
    if (is({"NoSuchUpload"}))
        return error(ErrorCode::NotFound, QStringLiteral("no such upload (completed or given up)"));
    if (c.isEmpty() && status == 404)
        return error(ErrorCode::NotFound, QStringLiteral("no such object (or no such bucket)"));
    if (is({"PreconditionFailed"}) || status == 412)
        return error(ErrorCode::Changed, QStringLiteral("the object is not the one expected (it changed, or exists already)"));
    if (is({"InvalidRange"}) || status == 416)
        return error(ErrorCode::OutOfRange, QStringLiteral("the range lies beyond the object"));
    if (is({"BadDigest", "XAmzContentSHA256Mismatch", "IncompleteBody", "InvalidDigest"}))
        return error(ErrorCode::Corrupt, QStringLiteral("the bytes were damaged on the way: the store refused them"));
    if (is({"RequestTimeout"}))
        return error(ErrorCode::Timeout, QStringLiteral("the store waited too long for the request's bytes"));
    if (is({"PermanentRedirect", "TemporaryRedirect"}) || status == 301 || status == 307)
        return error(ErrorCode::InvalidArgument, QStringLiteral("the bucket answers at another address: check the endpoint and region"));
    if (is({"NotImplemented"}) || status == 501)
        return error(ErrorCode::Unsupported, QStringLiteral("the store does not do this"));
    if (is({"SlowDown", "InternalError", "ServiceUnavailable"}) || status == 429 || status == 500 || status == 503)
        return error(ErrorCode::Busy, QStringLiteral("the store is busy and asked us to slow down; tried again and gave up"));
    if (status >= 400 && status < 500)  // a refusal: sending it again changes nothing
        return error(ErrorCode::InvalidArgument, QStringLiteral("the store refused the request"));
    return error(ErrorCode::Network, QStringLiteral("the store answered an error"));
}

} // namespace spectrum::s3

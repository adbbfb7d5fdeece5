// What S3 answers in XML: ListObjectsV2 pages and error bodies, read with QXmlStreamReader (no DTDs, no entities
// beyond XML's own), and S3 errors turned into ours.

#include "spectrum/transfer/s3client.h"

#include <QCryptographicHash>
#include <QXmlStreamReader>

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
            while (xml.readNextStartElement()) {
                if (xml.name() == QLatin1String("Key")) {
                    o.key = textOf(xml);
                } else if (xml.name() == QLatin1String("Size")) {
                    bool ok = false;
                    o.size = textOf(xml).toLongLong(&ok);
                    if (!ok || o.size < 0)
                        return Error(ErrorCode::Protocol, QStringLiteral("the store's listing gives an object a size that is not a number"));
                } else if (xml.name() == QLatin1String("ETag")) {
                    o.etag = textOf(xml).toUtf8();
                } else if (xml.name() == QLatin1String("LastModified")) {
                    o.lastModified = QDateTime::fromString(textOf(xml), Qt::ISODateWithMs);
                } else {
                    xml.skipCurrentElement();
                }
            }
            if (o.key.isEmpty())
                return Error(ErrorCode::Protocol, QStringLiteral("the store's listing has an object without a key"));
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
    if (!xml.readNextStartElement() || xml.name() != QLatin1String("Error"))
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
        const S3ErrorAnswer e = parseError(bytes);
        return Error(ErrorCode::Network, QStringLiteral("the store could not complete the upload (it said %1: %2)").arg(e.code, e.message));
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

QByteArray compositeChecksum(const QList<QByteArray> &partDigests)
{
    QCryptographicHash h(QCryptographicHash::Sha256);
    for (const QByteArray &d : partDigests)
        h.addData(d);
    return h.result().toBase64() + '-' + QByteArray::number(partDigests.size());
}

Error errorFor(int status, const QByteArray &body, const QString &what, const QString &bucket)
{
    const S3ErrorAnswer e = parseError(body);
    const QString said = e.code.isEmpty() ? QStringLiteral("HTTP %1").arg(status)
                                          : QStringLiteral("%1%2").arg(e.code, e.message.isEmpty() ? QString() : QStringLiteral(": ") + e.message.simplified());
    auto error = [&](ErrorCode code, const QString &meaning) { return Error(code, QStringLiteral("%1: %2 (the store said %3)").arg(what, meaning, said)); };
    const QString &c = e.code;
    if (c == QLatin1String("RequestTimeTooSkewed"))
        return error(ErrorCode::Authentication, QStringLiteral("this workstation's clock is too far from the store's (more than 15 minutes): set its time"));
    if (c == QLatin1String("InvalidAccessKeyId") || c == QLatin1String("XAdminUserNotFound"))  // AWS's; versitygw's
        return error(ErrorCode::Authentication, QStringLiteral("the store does not know this access key"));
    if (c == QLatin1String("SignatureDoesNotMatch"))
        return error(ErrorCode::Authentication, QStringLiteral("the store refused the signature: the secret key is wrong"));
    if (c == QLatin1String("AccessDenied") || status == 401 || status == 403)
        return error(ErrorCode::Authentication, QStringLiteral("the store refused access"));
    if (c == QLatin1String("NoSuchBucket"))
        return error(ErrorCode::NotFound, QStringLiteral("the bucket '%1' does not exist").arg(bucket));
    if (c == QLatin1String("NoSuchKey") || status == 404)
        return error(ErrorCode::NotFound, QStringLiteral("no such object"));
    if (c == QLatin1String("PreconditionFailed") || status == 412)
        return error(ErrorCode::Changed, QStringLiteral("the object is not the one expected (it changed, or exists already)"));
    if (c == QLatin1String("InvalidRange") || status == 416)
        return error(ErrorCode::OutOfRange, QStringLiteral("the range lies beyond the object"));
    if (c == QLatin1String("SlowDown") || status == 503 || status == 500)
        return error(ErrorCode::Busy, QStringLiteral("the store is busy and asked us to slow down; tried again and gave up"));
    if (status == 400)
        return error(ErrorCode::InvalidArgument, QStringLiteral("the store refused the request"));
    return error(ErrorCode::Network, QStringLiteral("the store answered an error"));
}

} // namespace spectrum::s3

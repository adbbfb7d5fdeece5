// SPDX-License-Identifier: Apache-2.0
// What an S3 store answers in XML — ListObjectsV2 pages, multipart uploads begun, completed and listed, their parts, error
// bodies, a token service's credentials — on any bytes: a listing is either an
// error or objects with keys and sizes that are not negative, a truncated page always says where to go on, and
// an error answer's code and message are bounded; never a crash.
#include "fuzztarget.h"

#include "spectrum/transfer/s3client.h"
#include "spectrum/transfer/stssession.h"

#include <QByteArray>

#include <cstdlib>

SPECTRUM_FUZZ_TARGET(s3xml)
{
    using namespace spectrum;
    const QByteArray body(reinterpret_cast<const char *>(data), qsizetype(size));
    const Result<S3Listing> listing = s3::parseListing(body);
    if (listing.isOk()) {
        for (const S3Object &o : listing.value().objects)
            if (o.key.isEmpty() || o.size < 0)
                std::abort();
        if (listing.value().truncated && listing.value().nextToken.isEmpty())
            std::abort();
    }
    const Result<QString> id = s3::parseUploadId(body);
    if (id.isOk() && id.value().isEmpty())
        std::abort();
    const Result<S3Object> completed = s3::parseCompleted(body);
    if (completed.isOk() && completed.value().etag.isEmpty())
        std::abort();
    const Result<QList<QPair<QString, QString>>> uploads = s3::parseUploads(body);
    if (uploads.isOk())
        for (const auto &[key, upload] : uploads.value())
            if (key.isEmpty() || upload.isEmpty())
                std::abort();
    const Result<S3PartListing> parts = s3::parseParts(body);
    if (parts.isOk()) {
        for (const S3Part &p : parts.value().parts)
            if (p.number < 1 || p.number > 10000 || p.size < 0 || p.etag.isEmpty())
                std::abort();
        if (parts.value().truncated && parts.value().nextMarker < 1)
            std::abort();
    }
    const S3ErrorAnswer e = s3::parseError(body);
    if (e.code.size() > 64 || e.message.size() > 300)
        std::abort();
    (void)s3::errorFor(int(size % 600), body, QStringLiteral("fuzz"), QStringLiteral("bucket"));
    // A security token service's answer: credentials with all three parts and an expiry, or an error.
    const Result<StsCredentials> sts = s3::parseAssumedRole(body);
    if (sts.isOk() && (sts.value().credentials.accessKey.isEmpty() || sts.value().credentials.secretKey.isEmpty()
                       || sts.value().credentials.sessionToken.isEmpty() || !sts.value().expires.isValid()))
        std::abort();
    (void)s3::stsErrorFor(int(size % 600), body, QStringLiteral("fuzz"), QStringLiteral("arn:aws:iam::role/r"));
    return 0;
}

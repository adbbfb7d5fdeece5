// SPDX-License-Identifier: Apache-2.0
#pragma once
// S3Archive: DICOM studies kept in an S3-compatible bucket (AWS S3, Ceph RGW, Garage…) under a layout of our own
// (stores/STORES.md, "S3 stores"):
//
//   PREFIX STUDY/SERIES/SOP.dcm     each instance, as sent (Part 10)
//   PREFIX STUDY/study.json         the study's index: the DICOM identity of every instance
//                                   {"format": "spectrum-s3-study/1", "instances": [ … ]}
//
// Sending puts the instances, then merges them into the study's index with a conditional write (If-Match on the
// index read, If-None-Match for the first one), tried again when another workstation wrote it meanwhile — so two
// workstations sending to one study never lose each other's instances. Listing and fetching read the index;
// fetching then reads the instances, several at once. Searching reads the indexes of the bucket's studies (one
// request per study: a bucket of a reading room's teaching files, not a hospital's archive; at that scale the
// cache's index answers instead — issue 23). Private to stores.

#include "spectrum/stores/archives/archive.h"
#include "spectrum/transfer/s3client.h"
#include "spectrum/transfer/stssession.h"

namespace spectrum {

/// The S3 endpoint of an s3 store, its secret key revealed (a store whose readers sign in: no keys, and no
/// session either — S3Archive gives it one).
Result<S3Endpoint> s3EndpointFor(const StoreConfig &store, const StoreConfigFile &config);

/// The layout's keys.
QString s3InstanceKey(const QString &prefix, const DicomIdentity &id);
QString s3StudyIndexKey(const QString &prefix, const QString &studyUid);

/// A study's index (study.json) as identities; an error when it is not one.
Result<QList<DicomIdentity>> parseS3StudyIndex(const QByteArray &json);
QByteArray s3StudyIndex(const QList<DicomIdentity> &instances);

class S3Archive : public Archive
{
    Q_OBJECT
public:
    /// A store whose readers sign in ("auth": "oidc") gets its credentials from its security token service with
    /// the sign-in's ID token (StsSession), held for this archive's requests until they expire or the reader
    /// signs out.
    S3Archive(StoreConfig config, StoreConfigFile all, std::shared_ptr<FileStore> cache, QObject *parent = nullptr);

    Reach reach() const override { return Reach::Hospital; }
    ResultJob<Done> *test() override;
    ResultJob<QList<DicomRecord>> *search(const DicomQuery &query) override;
    ResultJob<StudySummary> *list(const QString &studyUid) override;
    ResultJob<FetchSummary> *fetch(const FetchRequest &what, const FetchOptions &options, Kept kept) override;
    ResultJob<ExportSummary> *send(const QStringList &files) override;

private:
    /// s3EndpointFor, with this archive's session when its readers sign in.
    Result<S3Endpoint> endpoint() const;

    StsSession *m_sts = nullptr;
};

} // namespace spectrum

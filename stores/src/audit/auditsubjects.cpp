// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/audit/auditsubjects.h"

#include "spectrum/core/audit/audit.h"

#include <QMap>
#include <QUrl>

namespace spectrum {

namespace ae = auditevents;

/// The store as audit messages name it: its address (URL, AE@host:port) and its configured name.
ae::Peer auditPeerOf(const StoreConfig &config)
{
    ae::Peer p;
    p.name = config.name;
    if (const auto *web = config.ifKind<DicomWebSettings>()) {
        p.id = web->url;
        p.host = QUrl(web->url).host();
    } else if (const auto *dimse = config.ifKind<DimseSettings>()) {
        p.id = QStringLiteral("%1@%2:%3").arg(dimse->aeTitle, dimse->host).arg(dimse->port);
        p.host = dimse->host;
    } else if (const auto *blobd = config.ifKind<BlobdSettings>()) {
        p.id = blobd->url;
        p.host = QUrl(blobd->url).host();
    } else if (const auto *s3 = config.ifKind<S3Settings>()) {
        p.id = s3->url + QLatin1Char('/') + s3->bucket;
        p.host = QUrl(s3->url).host();
    } else if (const auto *local = config.ifKind<LocalSettings>()) {
        p.id = local->path.isEmpty() ? QStringLiteral("the workstation's cache") : QUrl::fromLocalFile(local->path).toString();
        p.host = auditHostName();
    }
    return p;
}

/// The studies of `identities`, one each with its patient and its SOP classes counted.
QList<ae::Study> auditStudiesOf(const QList<DicomIdentity> &identities)
{
    QMap<QString, ae::Study> studies;
    QMap<QString, QMap<QString, int>> classes;
    for (const DicomIdentity &id : identities) {
        ae::Study &s = studies[id.studyInstanceUid];
        if (s.studyUid.isEmpty()) {
            s.studyUid = id.studyInstanceUid;
            s.patientId = id.patientId;
            s.patientName = id.patientName;
            s.accessionNumber = id.accessionNumber;
        }
        ++classes[id.studyInstanceUid][id.sopClassUid];
    }
    QList<ae::Study> out;
    for (auto it = studies.begin(); it != studies.end(); ++it) {
        const QMap<QString, int> &c = classes.value(it.key());
        for (auto k = c.begin(); k != c.end(); ++k)
            it->sopClasses.append({k.key(), k.value()});
        out.append(*it);
    }
    return out;
}

ae::Study auditStudyOf(const StudySummary &study)
{
    ae::Study s;
    s.studyUid = study.identity.studyInstanceUid;
    s.patientId = study.identity.patientId;
    s.patientName = study.identity.patientName;
    s.accessionNumber = study.identity.accessionNumber;
    return s;
}

} // namespace spectrum

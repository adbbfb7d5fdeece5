// SPDX-License-Identifier: Apache-2.0
// C-FIND: a DicomQuery as a query dataset at each level, and the answers as DicomRecords, read in the
// character set the peer names.

#include "dimse/association.h"

#include "spectrum/core/dicomtext.h"
#include "spectrum/core/logging.h"
#include "spectrum/core/uid.h"

#include <QDir>
#include <cmath>
#include <vector>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QMetaObject>
#include <QPromise>
#include <QThread>
#include <QtConcurrent>

#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcuid.h>
#include <dcmtk/dcmnet/diutil.h>
#include <dcmtk/dcmnet/dstorscp.h>
#include <dcmtk/dcmnet/dstorscu.h>
#include <dcmtk/dcmnet/scu.h>
#include <dcmtk/dcmtls/tlslayer.h>
#include <dcmtk/oflog/oflog.h>

#include <QHostAddress>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <mutex>
#include <set>

namespace spectrum {

using namespace dimsewire;

namespace {

/// The C-FIND identifier; at the instance level with where each instance lies unless `places` is false.
DcmDataset queryDataset(const DicomQuery &q, QueryLevel level, const QString &seriesUid, bool places = true)
{
    DcmDataset ds;
    // A name searched in its own alphabet is sent in a character set that holds it, and says which.
    // ASCII and Latin-1 as such, anything else as UTF-8 (ISO_IR 192).
    const QByteArray charset = DicomTextDecoder::characterSetFor(q.patientName + q.patientId + q.accessionNumber + q.description);
    const bool utf8 = charset == "ISO_IR 192";
    auto putString = [utf8](DcmDataset &to, const DcmTagKey &tag, const QString &value) { dimsewire::putString(to, tag, value, utf8); };
    if (!charset.isEmpty())
        ds.putAndInsertString(DCM_SpecificCharacterSet, charset.constData());
    switch (level) {
    case QueryLevel::Patient:
        putString(ds, DCM_QueryRetrieveLevel, QStringLiteral("PATIENT"));
        putString(ds, DCM_PatientName, q.patientName);
        putString(ds, DCM_PatientID, q.patientId);
        putString(ds, DCM_PatientBirthDate, QString());
        putString(ds, DCM_PatientSex, QString());
        putString(ds, DCM_NumberOfPatientRelatedStudies, QString());
        return ds;
    case QueryLevel::Study:
        putString(ds, DCM_QueryRetrieveLevel, QStringLiteral("STUDY"));
        break;
    case QueryLevel::Series:
        putString(ds, DCM_QueryRetrieveLevel, QStringLiteral("SERIES"));
        break;
    case QueryLevel::Instance:
        putString(ds, DCM_QueryRetrieveLevel, QStringLiteral("IMAGE"));
        break;
    }
    // Matching keys carry a value; return keys go empty.
    putString(ds, DCM_StudyInstanceUID, q.studyInstanceUid);
    if (level == QueryLevel::Study) {
        putString(ds, DCM_PatientName, q.patientName);
        putString(ds, DCM_PatientID, q.patientId);
        putString(ds, DCM_IssuerOfPatientID, QString());
        putString(ds, DCM_PatientBirthDate, QString());
        putString(ds, DCM_PatientSex, QString());
        putString(ds, DCM_StudyDate, q.dicomDateRange());
        putString(ds, DCM_StudyTime, QString());
        putString(ds, DCM_AccessionNumber, q.accessionNumber);
        putString(ds, DCM_StudyDescription, q.description);
        putString(ds, DCM_ModalitiesInStudy, q.modality);
        putString(ds, DCM_NumberOfStudyRelatedSeries, QString());
        putString(ds, DCM_NumberOfStudyRelatedInstances, QString());
    } else {
        // Who the series or image belongs to, asked back at these levels too (archives answer with it): a first
        // look or a listing must know the patient before anything is shown.
        putString(ds, DCM_PatientName, QString());
        putString(ds, DCM_PatientID, QString());
        putString(ds, DCM_IssuerOfPatientID, QString());
        putString(ds, DCM_PatientBirthDate, QString());
        putString(ds, DCM_PatientSex, QString());
        putString(ds, DCM_StudyDate, QString());
        putString(ds, DCM_StudyDescription, QString());
        putString(ds, DCM_AccessionNumber, QString());
        putString(ds, DCM_SeriesInstanceUID, seriesUid);
        if (level == QueryLevel::Series) {
            putString(ds, DCM_Modality, q.modality);
            putString(ds, DCM_SeriesDescription, q.description);
            putString(ds, DCM_SeriesNumber, QString());
            putString(ds, DCM_BodyPartExamined, QString());
            putString(ds, DCM_NumberOfSeriesRelatedInstances, QString());
        } else {
            putString(ds, DCM_SOPInstanceUID, QString());
            putString(ds, DCM_SOPClassUID, QString());
            putString(ds, DCM_InstanceNumber, q.instanceNumber > 0 ? QString::number(q.instanceNumber) : QString());
            // Where each instance lies, as the DICOMweb listing asks: a volume is laid out before its slices come.
            if (places) {
                putString(ds, DCM_ImagePositionPatient, QString());
                putString(ds, DCM_ImageOrientationPatient, QString());
                putString(ds, DCM_FrameOfReferenceUID, QString());
                putString(ds, DCM_SliceThickness, QString());
            }
        }
    }
    return ds;
}

QString text(DcmItem *ds, const DcmTagKey &tag, const DicomTextDecoder *decoder = nullptr)
{
    OFString v;
    if (ds->findAndGetOFStringArray(tag, v).bad())
        return {};
    if (decoder)
        return decoder->decode(QByteArray(v.c_str(), qsizetype(v.length())), DcmTag(tag).getEVR() == EVR_PN);
    return QString::fromLatin1(v.c_str()).trimmed();
}

/// `count` decimal numbers as DicomIdentity holds them; empty when absent or not `count` finite numbers.
QString decimals(DcmItem *ds, const DcmTagKey &tag, int count)
{
    std::vector<double> values;
    for (int i = 0; i < count; ++i) {
        Float64 v = 0;
        if (ds->findAndGetFloat64(tag, v, unsigned(i)).bad() || !std::isfinite(v))
            return {};
        values.push_back(v);
    }
    if (DcmElement *e = nullptr; ds->findAndGetElement(tag, e).good() && e->getVM() != unsigned(count))
        return {};
    return DicomIdentity::formatDecimals(values);
}

DicomRecord recordFrom(DcmItem *ds, QueryLevel level)
{
    DicomRecord r;
    // Names and descriptions in the answer's own character set.
    const DicomTextDecoder decoder(text(ds, DCM_SpecificCharacterSet).toLatin1());
    const DicomTextDecoder *d = &decoder;
    r.level = level;
    DicomIdentity &id = r.identity;
    id.patientName = text(ds, DCM_PatientName, d);
    id.patientId = text(ds, DCM_PatientID, d);
    id.issuerOfPatientId = text(ds, DCM_IssuerOfPatientID, d);
    id.patientBirthDate = text(ds, DCM_PatientBirthDate);
    id.patientSex = text(ds, DCM_PatientSex);
    id.studyInstanceUid = text(ds, DCM_StudyInstanceUID);
    id.studyDate = text(ds, DCM_StudyDate);
    id.studyTime = text(ds, DCM_StudyTime);
    id.studyDescription = text(ds, DCM_StudyDescription, d);
    id.accessionNumber = text(ds, DCM_AccessionNumber, d);
    id.seriesInstanceUid = text(ds, DCM_SeriesInstanceUID);
    id.modality = text(ds, DCM_Modality);
    id.seriesDescription = text(ds, DCM_SeriesDescription, d);
    id.bodyPartExamined = text(ds, DCM_BodyPartExamined);
    id.seriesNumber = text(ds, DCM_SeriesNumber).toInt();
    id.sopInstanceUid = text(ds, DCM_SOPInstanceUID);
    id.sopClassUid = text(ds, DCM_SOPClassUID);
    id.instanceNumber = text(ds, DCM_InstanceNumber).toInt();
    id.imagePosition = decimals(ds, DCM_ImagePositionPatient, 3);
    id.imageOrientation = decimals(ds, DCM_ImageOrientationPatient, 6);
    id.frameOfReferenceUid = text(ds, DCM_FrameOfReferenceUID);
    id.sliceThickness = decimals(ds, DCM_SliceThickness, 1);
    const QString modalities = text(ds, DCM_ModalitiesInStudy);
    if (!modalities.isEmpty())
        r.modalitiesInStudy = modalities.split(QLatin1Char('\\'));
    bool ok = false;
    if (const int n = text(ds, DCM_NumberOfStudyRelatedSeries).toInt(&ok); ok)
        r.relatedSeries = n;
    if (const int n = text(ds, DCM_NumberOfPatientRelatedStudies).toInt(&ok); ok)
        r.relatedStudies = n;
    const DcmTagKey instances = level == QueryLevel::Study ? DCM_NumberOfStudyRelatedInstances : DCM_NumberOfSeriesRelatedInstances;
    if (const int n = text(ds, instances).toInt(&ok); ok)
        r.relatedInstances = n;
    return r;
}

/// C-FIND at one level; `keep` decides per record whether to go on.
Error findLevel(const DimseEndpoint &ep, const DcmDataset &query, QueryLevel level, const CancelToken &token,
                const std::function<bool(const DicomRecord &)> &keep, Uint16 *failedStatus = nullptr)
{
    Scu scu(ep);
    // Patients are found in the patient root model, the rest in the study root model.
    const char *model = level == QueryLevel::Patient ? UID_FINDPatientRootQueryRetrieveInformationModel : UID_FINDStudyRootQueryRetrieveInformationModel;
    scu.addModel(model);
    if (Error e = scu.open(); e.isError())
        return e;
    const T_ASC_PresentationContextID pc = scu.findPresentationContextID(model, "");
    if (pc == 0) {
        scu.releaseAssociation();
        return Error(ErrorCode::Unsupported, QStringLiteral("%1 does not offer C-FIND (%2 root)").arg(scu.context(), level == QueryLevel::Patient ? QStringLiteral("patient") : QStringLiteral("study")));
    }
    scu.onFind = [&](QRResponse *response) {
        if (token.isCancelled())
            return false;
        return keep(recordFrom(response->m_dataset, level));
    };
    DcmDataset keys(query);
    OFList<QRResponse *> responses;
    const OFCondition c = scu.sendFINDRequest(pc, &keys, &responses);
    Uint16 finalStatus = 0;
    for (QRResponse *r : responses) {
        if (r->m_status != STATUS_Pending && r->m_status != STATUS_FIND_Pending_WarningUnsupportedOptionalKeys)
            finalStatus = r->m_status;
        delete r;
    }
    scu.releaseAssociation();
    if (c.bad())
        return dimseError(c, QStringLiteral("C-FIND at %1").arg(scu.context()), scu.ourAeTitle());
    if (token.isCancelled())
        return Error(ErrorCode::Cancelled, QStringLiteral("C-FIND cancelled"));
    if (finalStatus != STATUS_Success && finalStatus != STATUS_FIND_Cancel_MatchingTerminatedDueToCancelRequest && failedStatus)
        *failedStatus = finalStatus;
    if (finalStatus != STATUS_Success && finalStatus != STATUS_FIND_Cancel_MatchingTerminatedDueToCancelRequest)
        return Error(ErrorCode::Network, QStringLiteral("C-FIND at %1 failed with status 0x%2").arg(scu.context()).arg(finalStatus, 4, 16, QLatin1Char('0')));
    return Error();
}

/// Instances of one series (`seriesUid`, or the query's), with where each lies. An archive that refuses the
/// optional keys of their places (PS3.4 C.2.2.1.3 lets it ignore them, and most do) is asked again without them:
/// the study is listed all the same, its slices placed by their headers as they come.
Error findInstances(const DimseEndpoint &ep, const DicomQuery &query, const QString &seriesUid, const CancelToken &token,
                    const std::function<bool(const DicomRecord &)> &keep)
{
    int kept = 0;
    Uint16 failed = 0;
    const Error e = findLevel(ep, queryDataset(query, QueryLevel::Instance, seriesUid), QueryLevel::Instance, token,
                              [&](const DicomRecord &r) { ++kept; return keep(r); }, &failed);
    if (!e.isError() || failed == 0 || kept > 0)
        return e;
    qCInfo(lcTransfer) << "C-FIND at" << ep.calledAeTitle << "refused the instances' places (status" << Qt::hex << failed << "); asked again without them";
    return findLevel(ep, queryDataset(query, QueryLevel::Instance, seriesUid, false), QueryLevel::Instance, token, keep);
}

} // namespace

ResultJob<QList<DicomRecord>> *DimseClient::find(const DicomQuery &query)
{
    return new PoolJob<QList<DicomRecord>>([ep = m_endpoint, query](const CancelToken &token, const PoolJob<QList<DicomRecord>>::Report &) -> Result<QList<DicomRecord>> {
        if (Error e = ep.validate(); e.isError())
            return e;
        if (Error e = query.validate(); e.isError())
            return e;
        QList<DicomRecord> out;
        int skipped = 0;
        auto keep = [&](const DicomRecord &r) {
            if (skipped < query.offset) {
                ++skipped;
                return true;
            }
            out << r;
            return query.limit <= 0 || out.size() < query.limit;
        };
        if (query.level == QueryLevel::Instance && query.seriesInstanceUid.isEmpty()) {
            // Study root is hierarchical: instances are found series by series.
            DicomQuery series = query;
            series.level = QueryLevel::Series;
            series.limit = series.offset = 0;
            QStringList seriesUids;
            if (Error e = findLevel(ep, queryDataset(series, QueryLevel::Series, QString()), QueryLevel::Series, token,
                                    [&](const DicomRecord &r) { seriesUids << r.identity.seriesInstanceUid; return true; });
                e.isError())
                return e;
            for (const QString &uid : seriesUids) {
                if (Error e = findInstances(ep, query, uid, token, keep); e.isError())
                    return e;
                if (query.limit > 0 && out.size() >= query.limit)
                    break;
            }
            return out;
        }
        if (Error e = query.level == QueryLevel::Instance ? findInstances(ep, query, query.seriesInstanceUid, token, keep)
                                                          : findLevel(ep, queryDataset(query, query.level, query.seriesInstanceUid), query.level, token, keep);
            e.isError())
            return e;
        return out;
    });
}

} // namespace spectrum

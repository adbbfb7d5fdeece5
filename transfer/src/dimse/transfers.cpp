// SPDX-License-Identifier: Apache-2.0
// C-GET, C-MOVE and C-STORE as an SCU: instances retrieved into a folder (or pushed by the PACS to our Storage
// SCP), and files sent, each sub-operation's failure counted, never lost.

#include "dimse/association.h"

#include "spectrum/core/dicomtext.h"
#include "spectrum/core/logging.h"
#include "spectrum/core/uid.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QMetaObject>
#include <QPromise>
#include <QThread>
#include <QtConcurrent>

#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcrledrg.h>
#include <dcmtk/dcmdata/dcuid.h>
#include <dcmtk/dcmdata/dcxfer.h>
#include <dcmtk/dcmjpeg/djdecode.h>
#include <dcmtk/dcmjpls/djdecode.h>
#include <dcmtk/dcmnet/diutil.h>
#include <dcmtk/dcmnet/dstorscp.h>
#include <dcmtk/dcmnet/dstorscu.h>
#include <dcmtk/dcmnet/scu.h>
#include <dcmtk/dcmtls/tlslayer.h>
#include <dcmtk/oflog/oflog.h>

#include <QHostAddress>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cstdlib>
#include <mutex>
#include <set>

namespace spectrum {

using namespace dimsewire;

namespace {

DcmDataset retrieveKeys(const QString &studyUid, const QString &seriesUid, const QString &sopUid)
{
    DcmDataset ds;
    const QString level = !sopUid.isEmpty() ? QStringLiteral("IMAGE") : !seriesUid.isEmpty() ? QStringLiteral("SERIES") : QStringLiteral("STUDY");
    putString(ds, DCM_QueryRetrieveLevel, level);
    putString(ds, DCM_StudyInstanceUID, studyUid);
    if (!seriesUid.isEmpty())
        putString(ds, DCM_SeriesInstanceUID, seriesUid);
    if (!sopUid.isEmpty())
        putString(ds, DCM_SOPInstanceUID, sopUid);
    return ds;
}

Error checkRetrieveUids(const QString &studyUid, const QString &seriesUid, const QString &sopUid)
{
    if (studyUid.isEmpty() || (!sopUid.isEmpty() && seriesUid.isEmpty()))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("a retrieval names a study, a series in it, or an instance in that"));
    for (const QString &uid : {studyUid, seriesUid, sopUid}) {
        if (!uid.isEmpty() && !isValidUid(uid))
            return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not a DICOM UID").arg(uid.left(80)));
    }
    return Error();
}

RetrieveCount countFrom(const OFList<RetrieveResponse *> &responses)
{
    RetrieveCount n;
    for (RetrieveResponse *r : responses) {
        n.completed = std::max(n.completed, int(r->m_numberOfCompletedSubops));
        n.failed = std::max(n.failed, int(r->m_numberOfFailedSubops));
        n.warning = std::max(n.warning, int(r->m_numberOfWarningSubops));
    }
    return n;
}

Uint16 finalStatus(const OFList<RetrieveResponse *> &responses)
{
    Uint16 s = 0;
    for (RetrieveResponse *r : responses) {
        if (r->m_status != STATUS_Pending)
            s = r->m_status;
    }
    return s;
}

} // namespace

ResultJob<RetrieveCount> *DimseClient::get(const QString &studyUid, const QString &seriesUid, const QString &sopUid, const QString &directory,
                                           std::function<Error(const ReceivedInstance &)> received)
{
    return new PoolJob<RetrieveCount>([ep = m_endpoint, studyUid, seriesUid, sopUid, directory, received](const CancelToken &token, const PoolJob<RetrieveCount>::Report &report) -> Result<RetrieveCount> {
        if (Error e = ep.validate(); e.isError())
            return e;
        if (Error e = checkRetrieveUids(studyUid, seriesUid, sopUid); e.isError())
            return e;
        if (!QDir().mkpath(directory))
            return Error(ErrorCode::Io, QStringLiteral("cannot create %1").arg(directory));
        QElapsedTimer clock;
        clock.start();
        Scu scu(ep);
        scu.addModel(UID_GETStudyRootQueryRetrieveInformationModel);
        // Storage contexts in the SCP role: the PACS sends on the same association. Common image classes get
        // one context per group of syntaxes (so an instance can come as it is stored); the rest uncompressed.
        int contexts = 1;
        for (int i = 0; i < numberOfDcmLongSCUStorageSOPClassUIDs && contexts < 127; ++i) {
            const char *sopClass = dcmLongSCUStorageSOPClassUIDs[i];
            const bool common = commonImageClasses().count(sopClass) > 0;
            for (const OFList<OFString> &group : storageSyntaxGroups()) {
                if (contexts >= 127)
                    break;
                scu.addPresentationContext(sopClass, group, ASC_SC_ROLE_SCP);
                ++contexts;
                if (!common)
                    break;
            }
        }
        scu.setStorageMode(DCMSCU_STORAGE_BIT_PRESERVING);
        scu.setStorageDir(of(directory));
        RetrieveCount count;
        Error firstError;
        scu.onStored = [&](const QString &file, const QString &sopClass, const QString &sopInstance) {
            count.bytes += QFileInfo(file).size();
            if (received) {
                if (Error e = received(ReceivedInstance{file, sopClass, sopInstance, ep.calledAeTitle, QString()}); e.isError() && !firstError.isError())
                    firstError = e;
            }
        };
        scu.reportRetrieveProgress(report, [&] { return !token.isCancelled() && !firstError.isError(); });
        if (Error e = scu.open(); e.isError())
            return e;
        const T_ASC_PresentationContextID pc = scu.findPresentationContextID(UID_GETStudyRootQueryRetrieveInformationModel, "");
        if (pc == 0) {
            scu.releaseAssociation();
            return Error(ErrorCode::Unsupported, QStringLiteral("%1 does not offer C-GET (study root)").arg(scu.context()));
        }
        DcmDataset keys = retrieveKeys(studyUid, seriesUid, sopUid);
        OFList<RetrieveResponse *> responses;
        const OFCondition c = scu.sendCGETRequest(pc, &keys, &responses);
        const RetrieveCount reported = countFrom(responses);
        const Uint16 status = finalStatus(responses);
        for (RetrieveResponse *r : responses)
            delete r;
        if (token.isCancelled() || firstError.isError())
            scu.abortAssociation();
        else
            scu.releaseAssociation();
        if (token.isCancelled())
            return Error(ErrorCode::Cancelled, QStringLiteral("C-GET cancelled"));
        if (firstError.isError())
            return firstError;
        if (c.bad())
            return dimseError(c, QStringLiteral("C-GET from %1").arg(scu.context()), scu.ourAeTitle());
        count.completed = std::max(count.completed, reported.completed);
        count.failed = reported.failed;
        count.warning = reported.warning;
        count.seconds = clock.nsecsElapsed() / 1e9;
        if (status != STATUS_Success && status != STATUS_GET_Warning_SubOperationsCompleteOneOrMoreFailures && count.completed == 0)
            return Error(ErrorCode::NotFound, QStringLiteral("C-GET from %1 found nothing to send (status 0x%2)").arg(scu.context()).arg(status, 4, 16, QLatin1Char('0')));
        return count;
    });
}

ResultJob<RetrieveCount> *DimseClient::move(const QString &studyUid, const QString &seriesUid, const QString &sopUid, const QString &destinationAeTitle)
{
    return new PoolJob<RetrieveCount>([ep = m_endpoint, studyUid, seriesUid, sopUid, destinationAeTitle](const CancelToken &token, const PoolJob<RetrieveCount>::Report &report) -> Result<RetrieveCount> {
        if (Error e = ep.validate(); e.isError())
            return e;
        if (Error e = checkRetrieveUids(studyUid, seriesUid, sopUid); e.isError())
            return e;
        if (!isValidAeTitle(destinationAeTitle))
            return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not an AE title").arg(destinationAeTitle));
        QElapsedTimer clock;
        clock.start();
        Scu scu(ep);
        scu.addModel(UID_MOVEStudyRootQueryRetrieveInformationModel);
        scu.reportRetrieveProgress(report, [&] { return !token.isCancelled(); });
        if (Error e = scu.open(); e.isError())
            return e;
        const T_ASC_PresentationContextID pc = scu.findPresentationContextID(UID_MOVEStudyRootQueryRetrieveInformationModel, "");
        if (pc == 0) {
            scu.releaseAssociation();
            return Error(ErrorCode::Unsupported, QStringLiteral("%1 does not offer C-MOVE (study root)").arg(scu.context()));
        }
        DcmDataset keys = retrieveKeys(studyUid, seriesUid, sopUid);
        OFList<RetrieveResponse *> responses;
        const OFCondition c = scu.sendMOVERequest(pc, of(destinationAeTitle), &keys, &responses);
        RetrieveCount count = countFrom(responses);
        const Uint16 status = finalStatus(responses);
        for (RetrieveResponse *r : responses)
            delete r;
        scu.releaseAssociation();
        if (token.isCancelled())
            return Error(ErrorCode::Cancelled, QStringLiteral("C-MOVE cancelled"));
        if (c.bad())
            return dimseError(c, QStringLiteral("C-MOVE at %1").arg(scu.context()), scu.ourAeTitle());
        count.seconds = clock.nsecsElapsed() / 1e9;
        if (status == STATUS_MOVE_Failed_MoveDestinationUnknown)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1 does not know the move destination '%2'").arg(scu.context(), destinationAeTitle));
        if (status != STATUS_Success && count.completed == 0)
            return Error(ErrorCode::Network, QStringLiteral("C-MOVE to '%1' at %2 failed (status 0x%3, %4 failed): does the PACS know '%1' as a destination?")
                                                 .arg(destinationAeTitle, scu.context()).arg(status, 4, 16, QLatin1Char('0')).arg(count.failed));
        return count;
    });
}

namespace {

/// DCMTK's decoders of what it can decompress (JPEG, JPEG-LS, RLE), for a C-STORE to an archive that takes only
/// uncompressed images. Process-wide, as DCMTK keeps them (the same registration imaging's decoder makes).
void registerDecompressionCodecs()
{
    static std::once_flag once;
    std::call_once(once, [] {
        DJDecoderRegistration::registerCodecs(EDC_photometricInterpretation);
        DJLSDecoderRegistration::registerCodecs();
        DcmRLEDecoderRegistration::registerCodecs();
        // Unregistered at exit (a second cleanup, by imaging's registration, does nothing): DCMTK's list would
        // otherwise be freed without its entries, which LeakSanitizer reports.
        std::atexit([] {
            DcmRLEDecoderRegistration::cleanup();
            DJLSDecoderRegistration::cleanup();
            DJDecoderRegistration::cleanup();
        });
    });
}

} // namespace

ResultJob<StoreCount> *DimseClient::store(const QStringList &files)
{
    return new PoolJob<StoreCount>([ep = m_endpoint, files](const CancelToken &token, const PoolJob<StoreCount>::Report &report) -> Result<StoreCount> {
        if (Error e = ep.validate(); e.isError())
            return e;
        quietDcmtk();
        disableNagleForDcmtk();
        std::unique_ptr<DcmTLSTransportLayer> tls;  // declared first: it outlives the SCU below
        class StoreScu : public DcmStorageSCU
        {
        public:
            using Entry = TransferEntry;
            using DcmSCU::useSecureConnection;
            std::function<void(const Entry &)> sent;

        protected:
            void notifySOPInstanceSent(const TransferEntry &entry) override
            {
                if (sent)
                    sent(entry);
            }
        } scu;
        scu.setAETitle(of(ep.callingAeTitle));
        scu.setPeerAETitle(of(ep.calledAeTitle));
        scu.setPeerHostName(of(ep.host));
        scu.setPeerPort(ep.port);
        scu.setConnectionTimeout(ep.timeoutSeconds);
        scu.setACSETimeout(Uint32(ep.timeoutSeconds));
        scu.setDIMSETimeout(Uint32(ep.timeoutSeconds));
        scu.setDIMSEBlockingMode(DIMSE_NONBLOCKING);
        scu.setHaltOnUnsuccessfulStoreMode(OFFalse);
        // Each instance is offered as it is stored and, when that is compressed, uncompressed too: an archive that
        // takes only uncompressed syntaxes (pynetdicom's storage SCP, many older PACS) gets it decompressed. A lossy
        // image decompressed keeps what it is (Lossy Image Compression stays "01"); nothing is compressed here.
        registerDecompressionCodecs();
        scu.setDecompressionMode(DcmStorageSCU::DM_lossyAndLossless);
        scu.setDatasetConversionMode(OFTrue);  // converted to what the association accepted, when that is another syntax
        if (ep.tls) {
            Result<std::unique_ptr<DcmTLSTransportLayer>> layer = tlsLayerFor(ep);
            if (!layer.isOk())
                return layer.error();
            tls = layer.takeValue();  // used once the network is set up, below
        }
        StoreCount result;
        for (const QString &f : files) {
            if (OFCondition c = scu.addDicomFile(OFFilename(QFile::encodeName(f).constData()), ERM_fileOnly, OFFalse); c.bad())
                result.failed.append({f, QStringLiteral("not a DICOM file we can send: %1").arg(QString::fromLatin1(c.text()))});
        }
        if (scu.getNumberOfSOPInstances() == 0)
            return result;
        int done = 0;
        const int total = int(scu.getNumberOfSOPInstances());
        scu.sent = [&](const StoreScu::Entry &entry) {
            const QString uid = qs(entry.SOPInstanceUID);
            // DcmStorageSCU marks an instance it could not offer or send with a "pending" status of its own
            // (0xFFxx): no C-STORE answer ever has it.
            const bool notOffered = !entry.RequestSent || (entry.ResponseStatusCode & 0xff00) == 0xff00;
            const QString syntax = qs(DcmXfer(entry.TransferSyntaxUID.c_str()).getXferName());
            if (entry.RequestSent && entry.ResponseStatusCode == STATUS_Success)
                result.stored << uid;
            else if (notOffered)
                result.failed.append({uid, QStringLiteral("not sent: the archive accepts it in none of the transfer syntaxes it can be sent in "
                                                          "(stored as %1; what DCMTK cannot decompress, such as JPEG 2000, goes only as it is)").arg(syntax)});
            else
                result.failed.append({uid, QStringLiteral("refused with status 0x%1").arg(entry.ResponseStatusCode, 4, 16, QLatin1Char('0'))});
            report(++done, total);
        };
        if (OFCondition c = scu.addPresentationContexts(); c.bad())
            return dimseError(c, QStringLiteral("C-STORE presentation contexts"));
        if (OFCondition c = scu.initNetwork(); c.bad())
            return dimseError(c, QStringLiteral("DIMSE network setup"));
        if (tls) {
            if (OFCondition c = scu.useSecureConnection(tls.get()); c.bad())
                return dimseError(c, QStringLiteral("TLS setup"));
        }
        if (token.isCancelled())
            return Error(ErrorCode::Cancelled, QStringLiteral("C-STORE cancelled"));
        const QString context = QStringLiteral("%1@%2:%3").arg(ep.calledAeTitle, ep.host).arg(ep.port);
        if (OFCondition c = scu.negotiateAssociation(); c.bad())
            return dimseError(c, QStringLiteral("association with %1").arg(context));
        const OFCondition c = scu.sendSOPInstances();
        scu.releaseAssociation();
        if (c.bad() && result.stored.isEmpty())
            return dimseError(c, QStringLiteral("C-STORE to %1").arg(context));
        return result;
    });
}

} // namespace spectrum

#include "spectrum/transfer/dimse.h"

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

namespace {

QString qs(const OFString &s) { return QString::fromLatin1(s.c_str()); }
OFString of(const QString &s) { return OFString(s.toLatin1().constData()); }

Error dimseError(const OFCondition &c, const QString &context)
{
    const Error base = Error::fromDcmtkCondition(c.module(), c.code(), c.text(), context);
    if (c == DUL_ASSOCIATIONREJECTED)  // most often an AE title the PACS does not know
        return Error(ErrorCode::Authentication, base.message() + QStringLiteral(" (is our AE title known to the PACS, and its AE title right?)"));
    if (c == DIMSE_NODATAAVAILABLE || c == DUL_READTIMEOUT)
        return Error(ErrorCode::Timeout, base.message());
    if (c == DUL_PEERABORTEDASSOCIATION)
        return Error(ErrorCode::Network, base.message() + QStringLiteral(" (PACSs abort for calling AE titles they do not know: is ours configured there?)"));
    return base;
}

void quietDcmtk()
{
    static std::once_flag once;
    std::call_once(once, [] {
        OFLog::configure(OFLogger::ERROR_LOG_LEVEL);
        DCM_dcmnetLogger.setLogLevel(OFLogger::FATAL_LOG_LEVEL);  // failures come back to us as conditions
        DCM_dcmtlsLogger.setLogLevel(OFLogger::FATAL_LOG_LEVEL);  // the same for TLS (a key it cannot read…)
    });
}

/// Transfer syntaxes we decode, grouped so that a sender can keep an instance as it is stored.
const QList<OFList<OFString>> &storageSyntaxGroups()
{
    static const QList<OFList<OFString>> groups = [] {
        QList<OFList<OFString>> g;
        OFList<OFString> uncompressed;
        uncompressed.push_back(UID_LittleEndianExplicitTransferSyntax);
        uncompressed.push_back(UID_LittleEndianImplicitTransferSyntax);
        uncompressed.push_back(UID_BigEndianExplicitTransferSyntax);
        OFList<OFString> lossless;
        lossless.push_back(UID_JPEGLSLosslessTransferSyntax);
        lossless.push_back(UID_JPEGProcess14SV1TransferSyntax);
        lossless.push_back(UID_JPEGProcess14TransferSyntax);
        lossless.push_back(UID_RLELosslessTransferSyntax);
        OFList<OFString> lossy;
        lossy.push_back(UID_JPEGProcess1TransferSyntax);
        lossy.push_back(UID_JPEGProcess2_4TransferSyntax);
        lossy.push_back(UID_JPEGLSLossyTransferSyntax);
        g << uncompressed << lossless << lossy;
        return g;
    }();
    return groups;
}

/// The image SOP classes a reading workstation meets most; they get a presentation context per syntax group.
const std::set<std::string> &commonImageClasses()
{
    static const std::set<std::string> classes{
        UID_CTImageStorage, UID_EnhancedCTImageStorage, UID_MRImageStorage, UID_EnhancedMRImageStorage,
        UID_ComputedRadiographyImageStorage, UID_DigitalXRayImageStorageForPresentation,
        UID_DigitalMammographyXRayImageStorageForPresentation, UID_UltrasoundImageStorage,
        UID_UltrasoundMultiframeImageStorage, UID_SecondaryCaptureImageStorage, UID_XRayAngiographicImageStorage,
        UID_XRayRadiofluoroscopicImageStorage, UID_NuclearMedicineImageStorage, UID_PositronEmissionTomographyImageStorage,
        UID_MultiframeGrayscaleWordSecondaryCaptureImageStorage, UID_MultiframeGrayscaleByteSecondaryCaptureImageStorage};
    return classes;
}

/// A job whose work runs on core's blocking pool with a progress reporter.
template <typename T>
class PoolJob : public ResultJob<T>
{
public:
    using Report = std::function<void(int done, int total)>;
    using Work = std::function<Result<T>(const CancelToken &, const Report &)>;
    explicit PoolJob(Work work) : m_work(std::move(work)) {}

protected:
    void doStart() override
    {
        const CancelToken token = this->cancelToken();
        if (this->policy() == ExecutionPolicy::Sync) {
            this->finishWith(m_work(token, [this](int done, int total) { this->setProgress(done, total); }));
            return;
        }
        // On the pool; its progress and its result come back to this job's thread through posted calls,
        // delivered only while the job lives (so `this` is alive when they run).
        std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(this);
        startOnPool(blockingPool(), [this, work = m_work, token, toJob] {
            auto result = std::make_shared<Result<T>>(work(token, [this, toJob](int done, int total) {
                toJob->post([this, done, total] { this->setProgress(done, std::max(total, done)); });
            }));
            toJob->post([this, result] { this->finishWith(std::move(*result)); });
        });
    }

private:
    Work m_work;
};

/// A TLS layer with DICOM's BCP 195 profile: our certificate and key (when given), and the CAs a peer's
/// certificate must chain to (`caFile`; empty: the system's when we call, none when we accept).
Result<std::unique_ptr<DcmTLSTransportLayer>> makeTlsLayer(T_ASC_NetworkRole role, const QString &caFile, const QString &certificateFile,
                                                           const QString &keyFile)
{
    auto layer = std::make_unique<DcmTLSTransportLayer>(role, nullptr, OFTrue);
    if (!*layer)
        return Error(ErrorCode::Internal, QStringLiteral("cannot set up TLS (OpenSSL)"));
    if (certificateFile.isEmpty() != keyFile.isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("TLS needs both a certificate and its private key"));
    if (!certificateFile.isEmpty()) {
        if (OFCondition c = layer->setPrivateKeyFile(QFile::encodeName(keyFile).constData(), DCF_Filetype_PEM); c.bad())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("cannot read the private key %1: %2").arg(keyFile, QString::fromLatin1(c.text())));
        if (OFCondition c = layer->setCertificateFile(QFile::encodeName(certificateFile).constData(), DCF_Filetype_PEM); c.bad())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("cannot read the certificate %1: %2").arg(certificateFile, QString::fromLatin1(c.text())));
        if (!layer->checkPrivateKeyMatchesCertificate())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("the private key %1 does not belong to the certificate %2").arg(keyFile, certificateFile));
    }
    if (!caFile.isEmpty() || role == NET_REQUESTOR) {
        const OFCondition trusted = caFile.isEmpty() ? layer->addTrustedCertificateDir("/etc/ssl/certs", DCF_Filetype_PEM)
                                                     : layer->addTrustedCertificateFile(QFile::encodeName(caFile).constData(), DCF_Filetype_PEM);
        if (trusted.bad())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("cannot read the CA certificates %1: %2")
                                                         .arg(caFile.isEmpty() ? QStringLiteral("/etc/ssl/certs") : caFile, QString::fromLatin1(trusted.text())));
    }
    if (role == NET_ACCEPTOR && !caFile.isEmpty())
        layer->addTrustedClientCertificateFile(QFile::encodeName(caFile).constData());  // the CAs we name to callers
    if (OFCondition c = layer->setTLSProfile(TSP_Profile_BCP195_ND); c.bad())
        return Error(ErrorCode::Internal, QStringLiteral("TLS profile: %1").arg(QString::fromLatin1(c.text())));
    if (OFCondition c = layer->activateCipherSuites(); c.bad())
        return Error(ErrorCode::Internal, QStringLiteral("TLS cipher suites: %1").arg(QString::fromLatin1(c.text())));
    layer->setCertificateVerification(role == NET_ACCEPTOR && caFile.isEmpty() ? DCV_ignoreCertificate : DCV_requireCertificate);
    return layer;
}

/// TLS for an association as the requestor: the PACS's certificate must chain to the endpoint's CA file (else
/// the system's CAs) and name the host we connect to — DCMTK checks the chain; the host is checked by OpenSSL
/// during the handshake. Our own certificate goes with it when the endpoint has one.
Result<std::unique_ptr<DcmTLSTransportLayer>> tlsLayerFor(const DimseEndpoint &ep)
{
    Result<std::unique_ptr<DcmTLSTransportLayer>> made = makeTlsLayer(NET_REQUESTOR, ep.caFile, ep.certificateFile, ep.keyFile);
    if (!made.isOk())
        return made;
    std::unique_ptr<DcmTLSTransportLayer> layer = made.takeValue();
    X509_VERIFY_PARAM *param = SSL_CTX_get0_param(layer->getNativeHandle());
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    const QByteArray host = ep.host.toUtf8();
    const int named = QHostAddress(ep.host).isNull() ? X509_VERIFY_PARAM_set1_host(param, host.constData(), size_t(host.size()))
                                                     : X509_VERIFY_PARAM_set1_ip_asc(param, host.constData());
    if (named != 1)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("cannot check certificates against the host '%1'").arg(ep.host));
    return layer;
}

/// One association to the PACS with the timeouts set.
class Scu : public DcmSCU
{
public:
    ~Scu() override
    {
        // The TLS layer is ours: the association and the network go before it does.
        if (isConnected())
            closeAssociation(DCMSCU_RELEASE_ASSOCIATION);
        freeNetwork();
    }

    explicit Scu(const DimseEndpoint &ep)
    {
        quietDcmtk();
        if (ep.tls) {
            Result<std::unique_ptr<DcmTLSTransportLayer>> layer = tlsLayerFor(ep);
            if (layer.isOk())
                m_tls = layer.takeValue();  // used once the network is set up (open())
            else
                m_setup = layer.error();
        }
        disableNagleForDcmtk();
        setAETitle(of(ep.callingAeTitle));
        setPeerAETitle(of(ep.calledAeTitle));
        setPeerHostName(of(ep.host));
        setPeerPort(ep.port);
        setMaxReceivePDULength(ASC_MAXIMUMPDUSIZE / 4);  // 64 KiB PDUs
        setConnectionTimeout(ep.timeoutSeconds);
        setACSETimeout(Uint32(ep.timeoutSeconds));
        setDIMSETimeout(Uint32(ep.timeoutSeconds));
        setDIMSEBlockingMode(DIMSE_NONBLOCKING);
        m_context = QStringLiteral("%1@%2:%3").arg(ep.calledAeTitle, ep.host).arg(ep.port);
    }

    Error open()
    {
        if (m_setup.isError())
            return m_setup;
        if (OFCondition c = initNetwork(); c.bad())
            return dimseError(c, QStringLiteral("DIMSE network setup"));
        if (m_tls) {  // on the network and the association parameters initNetwork() made
            if (OFCondition c = useSecureConnection(m_tls.get()); c.bad())
                return dimseError(c, QStringLiteral("TLS setup"));
        }
        if (OFCondition c = negotiateAssociation(); c.bad())
            return dimseError(c, QStringLiteral("association with %1").arg(m_context));
        return Error();
    }

    QString context() const { return m_context; }

    /// A query/retrieve model in the two uncompressed syntaxes every PACS speaks.
    void addModel(const char *abstractSyntax)
    {
        OFList<OFString> plain;
        plain.push_back(UID_LittleEndianExplicitTransferSyntax);
        plain.push_back(UID_LittleEndianImplicitTransferSyntax);
        addPresentationContext(abstractSyntax, plain);
    }

    /// Reports sub-operation progress of C-GET/C-MOVE; `goOn` says whether to keep waiting.
    template <typename Report, typename GoOn>
    void reportRetrieveProgress(const Report &report, GoOn goOn)
    {
        onRetrieve = [report, goOn](RetrieveResponse *r) {
            const int done = int(r->m_numberOfCompletedSubops + r->m_numberOfFailedSubops + r->m_numberOfWarningSubops);
            report(done, done + int(r->m_numberOfRemainingSubops));
            return goOn();
        };
    }

    std::function<bool(QRResponse *)> onFind;  ///< false: cancel the C-FIND
    std::function<void(const QString &file, const QString &sopClass, const QString &sopInstance)> onStored;
    std::function<bool(RetrieveResponse *)> onRetrieve;  ///< false: stop waiting

protected:
    OFCondition handleFINDResponse(const T_ASC_PresentationContextID presID, QRResponse *response, OFBool &waitForNextResponse) override
    {
        OFCondition c = DcmSCU::handleFINDResponse(presID, response, waitForNextResponse);
        if (c.good() && response->m_dataset && onFind && !m_cancelled && !onFind(response)) {
            m_cancelled = true;
            sendCANCELRequest(presID);  // the PACS then ends with a final Cancel status
        }
        return c;
    }

    OFCondition handleCGETResponse(const T_ASC_PresentationContextID presID, RetrieveResponse *response, OFBool &continueSession) override
    {
        OFCondition c = DcmSCU::handleCGETResponse(presID, response, continueSession);
        if (onRetrieve && !onRetrieve(response))
            continueSession = OFFalse;
        return c;
    }

    OFCondition handleMOVEResponse(const T_ASC_PresentationContextID presID, RetrieveResponse *response, OFBool &waitForNextResponse) override
    {
        OFCondition c = DcmSCU::handleMOVEResponse(presID, response, waitForNextResponse);
        if (onRetrieve && !onRetrieve(response))
            waitForNextResponse = OFFalse;
        return c;
    }

    void notifyInstanceStored(const OFString &filename, const OFString &sopClassUID, const OFString &sopInstanceUID) const override
    {
        if (onStored)
            onStored(qs(filename), qs(sopClassUID), qs(sopInstanceUID));
    }

private:
    QString m_context;
    bool m_cancelled = false;
    std::unique_ptr<DcmTLSTransportLayer> m_tls;  ///< outlives the association (see the destructor)
    Error m_setup;                                ///< a TLS set-up that failed: open() says why
};

void putString(DcmDataset &ds, const DcmTagKey &tag, const QString &value, bool utf8 = false)
{
    ds.putAndInsertString(tag, (utf8 ? value.toUtf8() : value.toLatin1()).constData());
}

DcmDataset queryDataset(const DicomQuery &q, QueryLevel level, const QString &seriesUid)
{
    DcmDataset ds;
    // A name searched in its own alphabet is sent in a character set that holds it, and says which.
    // ASCII and Latin-1 as such, anything else as UTF-8 (ISO_IR 192).
    const QByteArray charset = DicomTextDecoder::characterSetFor(q.patientName + q.patientId + q.accessionNumber + q.description);
    const bool utf8 = charset == "ISO_IR 192";
    auto putString = [utf8](DcmDataset &to, const DcmTagKey &tag, const QString &value) { spectrum::putString(to, tag, value, utf8); };
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
            putString(ds, DCM_NumberOfSeriesRelatedInstances, QString());
        } else {
            putString(ds, DCM_SOPInstanceUID, QString());
            putString(ds, DCM_SOPClassUID, QString());
            putString(ds, DCM_InstanceNumber, q.instanceNumber > 0 ? QString::number(q.instanceNumber) : QString());
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
    id.seriesNumber = text(ds, DCM_SeriesNumber).toInt();
    id.sopInstanceUid = text(ds, DCM_SOPInstanceUID);
    id.sopClassUid = text(ds, DCM_SOPClassUID);
    id.instanceNumber = text(ds, DCM_InstanceNumber).toInt();
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
                const std::function<bool(const DicomRecord &)> &keep)
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
        return dimseError(c, QStringLiteral("C-FIND at %1").arg(scu.context()));
    if (token.isCancelled())
        return Error(ErrorCode::Cancelled, QStringLiteral("C-FIND cancelled"));
    if (finalStatus != STATUS_Success && finalStatus != STATUS_FIND_Cancel_MatchingTerminatedDueToCancelRequest)
        return Error(ErrorCode::Network, QStringLiteral("C-FIND at %1 failed with status 0x%2").arg(scu.context()).arg(finalStatus, 4, 16, QLatin1Char('0')));
    return Error();
}

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

// ---- public ----

bool isValidAeTitle(const QString &ae)
{
    if (ae.trimmed().isEmpty() || ae.size() > 16)
        return false;
    for (const QChar c : ae) {
        if (c.unicode() < 0x20 || c.unicode() > 0x7e || c == QLatin1Char('\\'))
            return false;
    }
    return true;
}

void disableNagleForDcmtk()
{
    static std::once_flag once;
    std::call_once(once, [] {
        // DCMTK reads this variable whenever it opens or accepts a connection (dcmnet/libsrc/dulfsm.cc).
        if (qEnvironmentVariableIsEmpty("TCP_NODELAY"))
            qputenv("TCP_NODELAY", "1");
    });
}

Error DimseEndpoint::validate() const
{
    if (host.trimmed().isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("a DIMSE peer needs a host"));
    if (port == 0)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("a DIMSE peer needs a port"));
    if (!isValidAeTitle(calledAeTitle))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not an AE title (1-16 printable characters, no '\\')").arg(calledAeTitle));
    if (!isValidAeTitle(callingAeTitle))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not an AE title (1-16 printable characters, no '\\')").arg(callingAeTitle));
    if (timeoutSeconds < 1)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the DIMSE timeout must be at least a second"));
    return Error();
}

DimseClient::DimseClient(DimseEndpoint endpoint, QObject *parent) : QObject(parent), m_endpoint(std::move(endpoint))
{
    quietDcmtk();
    disableNagleForDcmtk();
}

ResultJob<Done> *DimseClient::echo()
{
    return new PoolJob<Done>([ep = m_endpoint](const CancelToken &, const PoolJob<Done>::Report &) -> Result<Done> {
        if (Error e = ep.validate(); e.isError())
            return e;
        Scu scu(ep);
        OFList<OFString> syntaxes;
        syntaxes.push_back(UID_LittleEndianImplicitTransferSyntax);
        scu.addPresentationContext(UID_VerificationSOPClass, syntaxes);
        if (Error e = scu.open(); e.isError())
            return e;
        const OFCondition c = scu.sendECHORequest(0);
        scu.releaseAssociation();
        if (c.bad())
            return dimseError(c, QStringLiteral("C-ECHO to %1").arg(scu.context()));
        return Done{};
    });
}

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
                if (Error e = findLevel(ep, queryDataset(query, QueryLevel::Instance, uid), QueryLevel::Instance, token, keep); e.isError())
                    return e;
                if (query.limit > 0 && out.size() >= query.limit)
                    break;
            }
            return out;
        }
        if (Error e = findLevel(ep, queryDataset(query, query.level, query.seriesInstanceUid), query.level, token, keep); e.isError())
            return e;
        return out;
    });
}

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
                if (Error e = received(ReceivedInstance{file, sopClass, sopInstance, ep.calledAeTitle}); e.isError() && !firstError.isError())
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
            return dimseError(c, QStringLiteral("C-GET from %1").arg(scu.context()));
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
            return dimseError(c, QStringLiteral("C-MOVE at %1").arg(scu.context()));
        count.seconds = clock.nsecsElapsed() / 1e9;
        if (status == STATUS_MOVE_Failed_MoveDestinationUnknown)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("%1 does not know the move destination '%2'").arg(scu.context(), destinationAeTitle));
        if (status != STATUS_Success && count.completed == 0)
            return Error(ErrorCode::Network, QStringLiteral("C-MOVE to '%1' at %2 failed (status 0x%3, %4 failed): does the PACS know '%1' as a destination?")
                                                 .arg(destinationAeTitle, scu.context()).arg(status, 4, 16, QLatin1Char('0')).arg(count.failed));
        return count;
    });
}

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
            if (entry.RequestSent && entry.ResponseStatusCode == STATUS_Success)
                result.stored << uid;
            else
                result.failed.append({uid, entry.RequestSent ? QStringLiteral("refused with status 0x%1").arg(entry.ResponseStatusCode, 4, 16, QLatin1Char('0'))
                                                             : QStringLiteral("not sent (no accepted presentation context)")});
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

// ---- Storage SCP ----

namespace {

class StorageListener : public DcmStorageSCP
{
public:
    std::atomic<bool> stopping{false};
    std::function<void(const QString &, const QString &, const QString &)> stored;

protected:
    OFBool stopAfterConnectionTimeout() override { return stopping.load(); }
    OFBool stopAfterCurrentAssociation() override { return stopping.load(); }
    void notifyInstanceStored(const OFString &filename, const OFString &sopClassUID, const OFString &sopInstanceUID, DcmDataset *) const override
    {
        if (stored)
            stored(qs(filename), qs(sopClassUID), qs(sopInstanceUID));
    }
};

} // namespace

struct StorageScp::Private
{
    std::unique_ptr<DcmTLSTransportLayer> tls;  // declared first: it outlives the listener's network
    StorageListener listener;
    std::unique_ptr<QThread> thread;
    std::mutex handlerMutex;
    std::function<Error(const ReceivedInstance &)> handler;
};

StorageScp::StorageScp(Options options, QObject *parent) : QObject(parent), m_options(std::move(options)), d(std::make_shared<Private>())
{
    qRegisterMetaType<spectrum::ReceivedInstance>();
    qRegisterMetaType<spectrum::Error>();
    quietDcmtk();
    disableNagleForDcmtk();
}

StorageScp::~StorageScp()
{
    stop();
}

void StorageScp::setHandler(std::function<Error(const ReceivedInstance &)> handler)
{
    std::lock_guard<std::mutex> lock(d->handlerMutex);
    d->handler = std::move(handler);
}

bool StorageScp::isRunning() const
{
    return d->thread && d->thread->isRunning();
}

Error StorageScp::start()
{
    if (isRunning())
        return Error();
    if (!isValidAeTitle(m_options.aeTitle))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not an AE title").arg(m_options.aeTitle));
    if (m_options.directory.isEmpty() || !QDir().mkpath(m_options.directory))
        return Error(ErrorCode::Io, QStringLiteral("cannot create the folder for received instances '%1'").arg(m_options.directory));
    StorageListener &l = d->listener;
    l.stopping = false;
    l.setAETitle(of(m_options.aeTitle));
    l.setPort(m_options.port);
    l.setConnectionBlockingMode(DUL_NOBLOCK);
    l.setConnectionTimeout(1);  // how often the listener looks whether it should stop
    l.setACSETimeout(Uint32(m_options.timeoutSeconds));
    l.setDIMSETimeout(Uint32(m_options.timeoutSeconds));
    l.setDIMSEBlockingMode(DIMSE_NONBLOCKING);
    l.setHostLookupEnabled(OFFalse);
    l.setOutputDirectory(of(m_options.directory));
    l.setFilenameGenerationMode(DcmStorageSCP::FGM_UniqueFromNewUID);  // never a name chosen by the sender
    l.setFilenameExtension(".dcm");
    l.setDatasetStorageMode(DcmStorageSCP::DGM_StoreBitPreserving);
    // Verification (C-ECHO) is DcmStorageSCP's own already: adding it again would make the profile invalid.
    OFList<OFString> all;
    for (const OFList<OFString> &group : storageSyntaxGroups()) {
        for (const OFString &ts : group)
            all.push_back(ts);
    }
    // DCMTK takes at most 128 abstract syntaxes per profile: its curated list of the storage classes a network
    // sees (120 of its 186), all in any syntax we decode.
    for (int i = 0; i < numberOfDcmLongSCUStorageSOPClassUIDs; ++i)
        l.addPresentationContext(dcmLongSCUStorageSOPClassUIDs[i], all);
    // Images the decoder reads that the curated list leaves out (8 places are left under the 128).
    l.addPresentationContext(UID_ParametricMapStorage, all);  // Float / Double Float Pixel Data
    std::weak_ptr<Private> weak = d;
    // Posted from the listener's thread, delivered only while this lives: `self` is never dangling in them.
    StorageScp *self = this;
    std::shared_ptr<DeliveryAddress> toSelf = DeliveryAddress::of(this);
    const QString ae = m_options.aeTitle;
    l.stored = [weak, self, toSelf](const QString &file, const QString &sopClass, const QString &sopInstance) {
        auto p = weak.lock();
        if (!p)
            return;
        ReceivedInstance instance{file, sopClass, sopInstance, QString()};
        Error e;
        {
            std::lock_guard<std::mutex> lock(p->handlerMutex);
            if (p->handler)
                e = p->handler(instance);
        }
        toSelf->post([self, instance, e] {
            if (e.isError())
                Q_EMIT self->failed(e);
            else
                Q_EMIT self->instanceReceived(instance);
        });
    };
    l.getConfig().setTransportLayer(nullptr);  // a start after a stop: what this start's options say, nothing older
    d->tls.reset();
    if (!m_options.certificateFile.isEmpty() || !m_options.keyFile.isEmpty()) {
        Result<std::unique_ptr<DcmTLSTransportLayer>> layer = makeTlsLayer(NET_ACCEPTOR, m_options.clientCaFile, m_options.certificateFile, m_options.keyFile);
        if (!layer.isOk())
            return layer.error().withContext(QStringLiteral("Storage SCP %1").arg(ae));
        d->tls = layer.takeValue();
        l.getConfig().setTransportLayer(d->tls.get());
    } else if (!m_options.clientCaFile.isEmpty()) {
        return Error(ErrorCode::InvalidArgument, QStringLiteral("Storage SCP %1: client certificates need TLS (a certificate and key)").arg(ae));
    }
    if (OFCondition c = l.openListenPort(); c.bad())
        return dimseError(c, QStringLiteral("Storage SCP %1 on port %2").arg(ae).arg(m_options.port));
    d->thread.reset(QThread::create([weak, self, toSelf] {
        auto p = weak.lock();
        if (!p)
            return;
        const OFCondition c = p->listener.acceptAssociations();
        if (c.bad() && !p->listener.stopping) {
            const Error e = dimseError(c, QStringLiteral("Storage SCP"));
            toSelf->post([self, e] { Q_EMIT self->failed(e); });
        }
    }));
    d->thread->start();
    return Error();
}

void StorageScp::stop()
{
    if (!d->thread)
        return;
    d->listener.stopping = true;
    d->thread->wait();
    d->thread.reset();
}

} // namespace spectrum

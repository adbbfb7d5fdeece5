// SPDX-License-Identifier: Apache-2.0
// DIMSE associations: errors mapped from DCMTK, TLS with the BCP 195 profile, the presentation contexts of the
// storage classes, an endpoint's checks, and C-ECHO.

#include "dimse/association.h"

#include "spectrum/core/dicomtext.h"
#include "spectrum/core/logging.h"
#include "spectrum/core/privatefile.h"
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

using namespace dimsewire;

namespace dimsewire {

Error dimseError(const OFCondition &c, const QString &context, const QString &ourAeTitle)
{
    const Error base = Error::fromDcmtkCondition(c.module(), c.code(), c.text(), context);
    const QString ours = ourAeTitle.isEmpty() ? QStringLiteral("our AE title") : QStringLiteral("our AE title %1").arg(ourAeTitle);
    if (c == DUL_ASSOCIATIONREJECTED)  // most often an AE title the PACS does not know
        return Error(ErrorCode::Authentication, base.message() + QStringLiteral(" (is %1 known to the PACS, and its AE title right?)").arg(ours));
    if (c == DIMSE_NODATAAVAILABLE || c == DUL_READTIMEOUT)
        return Error(ErrorCode::Timeout, base.message());
    if (c == DUL_PEERABORTEDASSOCIATION)
        return Error(ErrorCode::Network, base.message() + QStringLiteral(" (PACSs abort for calling AE titles they do not know: is %1 configured there?)").arg(ours));
    return base;
}

void quietDcmtk()
{
    static std::once_flag once;
    std::call_once(once, [] {
        // SPECTRUM_DCMTK_LOG=debug (or info, warn…): DCMTK's own account of an association on stderr, for an
        // admin finding out why a PACS refuses us.
        const QByteArray level = qgetenv("SPECTRUM_DCMTK_LOG").toLower();
        if (!level.isEmpty()) {
            const OFLogger::LogLevel l = level == "trace" ? OFLogger::TRACE_LOG_LEVEL : level == "debug" ? OFLogger::DEBUG_LOG_LEVEL
                : level == "info" ? OFLogger::INFO_LOG_LEVEL : OFLogger::WARN_LOG_LEVEL;
            OFLog::configure(l);
            return;
        }
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
        if (Error e = checkPrivateFile(keyFile, QStringLiteral("the private key")); e.isError())
            return e;
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

} // namespace dimsewire

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
            return dimseError(c, QStringLiteral("C-ECHO to %1").arg(scu.context()), scu.ourAeTitle());
        return Done{};
    });
}

} // namespace spectrum

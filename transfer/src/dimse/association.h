// SPDX-License-Identifier: Apache-2.0
#pragma once
// DIMSE's insides, shared by the files that each do one of its jobs (dimse.h says what they promise):
//   association.cpp  errors, TLS (BCP 195), presentation contexts, the endpoint's checks, C-ECHO
//   query.cpp        C-FIND: query datasets, answers as records, in the peer's character set
//   transfers.cpp    C-GET, C-MOVE and C-STORE as an SCU
//   storagescp.cpp   the Storage SCP that takes what a PACS pushes
// A private header: DCMTK stays out of transfer's public headers.

#include "spectrum/transfer/dimse.h"

#include "spectrum/core/threadpools.h"

#include <dcmtk/dcmnet/scu.h>
#include <dcmtk/dcmtls/tlslayer.h>

#include <memory>
#include <set>
#include <string>

namespace spectrum::dimsewire {

/// DCMTK's strings to Qt's and back (Latin-1: what DIMSE carries outside the text VRs).
inline QString qs(const OFString &s) { return QString::fromLatin1(s.c_str()); }
inline OFString of(const QString &s) { return OFString(s.toLatin1().constData()); }
/// Puts a string element into a dataset, in UTF-8 when the dataset says ISO_IR 192, else Latin-1.
inline void putString(DcmDataset &ds, const DcmTagKey &tag, const QString &value, bool utf8 = false)
{
    ds.putAndInsertString(tag, (utf8 ? value.toUtf8() : value.toLatin1()).constData());
}
/// A DCMTK condition as our error: its code mapped (refused association, timeout, network…), its text kept.
/// `ourAeTitle`: the calling AE title, named in the hint when the PACS refuses or aborts (it may not know it).
Error dimseError(const OFCondition &c, const QString &context, const QString &ourAeTitle = QString());
/// DCMTK's own logging off (we report through errors and our categories).
void quietDcmtk();
/// The transfer syntaxes offered and accepted per storage class, best first.
const QList<OFList<OFString>> &storageSyntaxGroups();
/// The storage classes a C-GET offers (DCMTK can propose 128 contexts at most).
const std::set<std::string> &commonImageClasses();
/// A TLS layer with DICOM's BCP 195 profile: our certificate and key (when given), and the CAs a peer's
/// certificate must chain to (`caFile`; empty: the system's when we call, none when we accept).
Result<std::unique_ptr<DcmTLSTransportLayer>> makeTlsLayer(T_ASC_NetworkRole role, const QString &caFile, const QString &certificateFile,
                                                           const QString &keyFile);
/// The TLS layer for calling `ep`: its CAs, and its host checked against the peer's certificate.
Result<std::unique_ptr<DcmTLSTransportLayer>> tlsLayerFor(const DimseEndpoint &ep);

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
        m_ours = ep.callingAeTitle;
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
            return dimseError(c, QStringLiteral("association with %1").arg(m_context), m_ours);
        return Error();
    }

    QString context() const { return m_context; }
    QString ourAeTitle() const { return m_ours; }

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
    QString m_ours;  ///< our (calling) AE title
    bool m_cancelled = false;
    std::unique_ptr<DcmTLSTransportLayer> m_tls;  ///< outlives the association (see the destructor)
    Error m_setup;                                ///< a TLS set-up that failed: open() says why
};

} // namespace spectrum::dimsewire

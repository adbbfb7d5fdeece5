// SPDX-License-Identifier: Apache-2.0
// The Storage SCP: a listener (plain or TLS) that takes the instances a PACS pushes, C-MOVE's answers among them,
// and hands each to the workstation's handler, which decides whether it is kept.

#include "dimse/association.h"

#include "spectrum/core/dicomtext.h"
#include "spectrum/core/audit/audit.h"
#include "spectrum/core/audit/auditevents.h"
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
#include <dcmtk/dcmnet/dulstruc.h>
#include <dcmtk/dcmnet/dstorscp.h>
#include <dcmtk/dcmnet/dstorscu.h>
#include <dcmtk/dcmnet/scu.h>
#include <dcmtk/dcmtls/tlslayer.h>
#include <dcmtk/oflog/oflog.h>

#include <QDateTime>
#include <QHash>
#include <QHostAddress>
#include <QHostInfo>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>

namespace spectrum {

using namespace dimsewire;


namespace {

class StorageListener : public DcmStorageSCP
{
public:
    std::atomic<bool> stopping{false};
    /// What became of a received instance: an error when it was not kept (the C-STORE is then answered so).
    std::function<Error(const ReceivedInstance &)> stored;
    std::function<void(const QString &)> refused;
    QString ourAeTitle;  ///< set before the listener starts
    /// A socket listening on one address, put in place of DCMTK's (which listens on every address of a port
    /// nobody is told) before the first association is waited for. DCMTK closes it with its network.
    std::atomic<int> ownListenSocket{-1};
    /// Who may call: changed while it runs (a configuration followed), read by the listener's thread.
    void setCallers(const QList<QPair<QString, QString>> &list, bool any)
    {
        std::lock_guard<std::mutex> lock(m_callersMutex);
        m_callers = list;
        m_anyCaller = any;
        m_resolved.clear();
    }

protected:
    OFBool checkCalledAETitleAccepted(const OFString &calledAE) override
    {
        m_why = QStringLiteral("it called AE title '%1', not ours (%2)").arg(qs(calledAE).trimmed(), ourAeTitle);
        return qs(calledAE).trimmed() == ourAeTitle;
    }
    OFBool checkCallingHostAccepted(const OFString &hostOrIp) override
    {
        (void)hostOrIp;  // DCMTK passes the called presentation address here: the peer's is getPeerIP()
        const QString host = qs(getPeerIP());
        m_why = QStringLiteral("no caller is allowed from %1").arg(host);
        std::lock_guard<std::mutex> lock(m_callersMutex);
        return m_anyCaller || std::any_of(m_callers.begin(), m_callers.end(), [&](const auto &c) { return hostMatches(c.second, host); });
    }
    OFBool checkCallingAETitleAccepted(const OFString &callingAE) override
    {
        const QString ae = qs(callingAE).trimmed(), host = qs(getPeerIP());
        m_why = QStringLiteral("%1 at %2 is not among the allowed callers").arg(ae, host);
        std::lock_guard<std::mutex> lock(m_callersMutex);
        return m_anyCaller || std::any_of(m_callers.begin(), m_callers.end(), [&](const auto &c) { return c.first == ae && hostMatches(c.second, host); });
    }
    void refuseAssociation(const DcmRefuseReasonType reason) override
    {
        const bool who = reason == DCMSCP_CALLED_AE_TITLE_NOT_RECOGNIZED || reason == DCMSCP_CALLING_AE_TITLE_NOT_RECOGNIZED
            || reason == DCMSCP_CALLING_HOST_NOT_ALLOWED;
        const QString what = QStringLiteral("refused an association from %1 at %2: %3")
                                 .arg(qs(getPeerAETitle()).trimmed(), qs(getPeerIP()), who ? m_why : QStringLiteral("DCMTK's reason %1").arg(int(reason)));
        qCWarning(lcTransfer).noquote() << "Storage SCP" << ourAeTitle << what;
        // A caller not allowed is a node that failed to authenticate: on the audit trail (a connection that asked
        // nothing, or too many at once, is only logged).
        if (who) {
            const QString peerAe = qs(getPeerAETitle()).trimmed(), peerHost = qs(getPeerIP());
            audit(auditevents::securityAlert(auditevents::Alert::NodeAuthentication,
                                             auditevents::Peer{QStringLiteral("%1@%2").arg(peerAe, peerHost), peerAe, peerHost},
                                             QStringLiteral("Storage SCP %1 %2").arg(ourAeTitle, what), auditevents::AlertBy::Server));
        }
        if (refused)
            refused(what);
        DcmStorageSCP::refuseAssociation(reason);
    }

    // Called for every C-STORE before its data set is received (bit-preserving too): who sent it, and for whom.
    OFCondition generateSTORERequestFilename(const T_DIMSE_C_StoreRQ &request, OFString &filename) override
    {
        m_originator = (request.opts & O_STORE_MOVEORIGINATORAETITLE) ? qs(request.MoveOriginatorApplicationEntityTitle).trimmed() : QString();
        m_caller = qs(getPeerAETitle()).trimmed();
        return DcmStorageSCP::generateSTORERequestFilename(request, filename);
    }
    OFCondition waitForAssociationRQ(T_ASC_Network *network) override
    {
        if (ownListenSocket >= 0 && network && network->network) {
            auto *key = static_cast<PRIVATE_NETWORKKEY *>(static_cast<void *>(network->network));
            ::close(key->networkSpecific.TCP.listenSocket);
            key->networkSpecific.TCP.listenSocket = ownListenSocket.exchange(-1);
        }
        return DcmStorageSCP::waitForAssociationRQ(network);
    }
    OFBool stopAfterConnectionTimeout() override { return stopping.load(); }
    OFBool stopAfterCurrentAssociation() override { return stopping.load(); }
    void notifyInstanceStored(const OFString &filename, const OFString &sopClassUID, const OFString &sopInstanceUID, DcmDataset *) const override
    {
        // DCMTK calls this after writing the file and before answering the C-STORE: the instance is kept (or
        // handed to the fetch that claims it) first, so a sender never hears Success for what was not kept.
        m_notKept = {};
        if (stored) {
            const Error e = stored(ReceivedInstance{qs(filename), qs(sopClassUID), qs(sopInstanceUID), m_caller, m_originator});
            if (e.isError())
                m_notKept = {sopInstanceUID, e.code()};
        }
    }
    OFCondition sendSTOREResponse(const T_ASC_PresentationContextID presID, const T_DIMSE_C_StoreRQ &request, const Uint16 status) override
    {
        Uint16 answer = status;
        if (status == STATUS_Success && !m_notKept.first.empty() && m_notKept.first == request.AffectedSOPInstanceUID) {
            // Not kept: the sender keeps its copy and may send it again. A full disk is out of resources; an
            // instance that is not what it says, "cannot understand"; anything else a processing failure.
            answer = m_notKept.second == ErrorCode::DiskFull ? Uint16(STATUS_STORE_Refused_OutOfResources)
                : m_notKept.second == ErrorCode::InvalidDicom || m_notKept.second == ErrorCode::Corrupt ? Uint16(STATUS_STORE_Error_CannotUnderstand)
                                                                                                           : Uint16(0x0110);  // Processing Failure
        }
        m_notKept = {};
        return DcmStorageSCP::sendSTOREResponse(presID, request, answer);
    }

private:
    /// A caller's host as configured ("*", an address, or a name looked up here, on the listener's thread, once)
    /// against the address an association came from.
    bool hostMatches(const QString &configured, const QString &peer)
    {
        if (configured == QLatin1String("*") || configured == peer)
            return true;
        const QHostAddress from(peer);
        if (!QHostAddress(configured).isNull())
            return QHostAddress(configured).isEqual(from, QHostAddress::TolerantConversion);
        auto known = m_resolved.find(configured);
        if (known == m_resolved.end() || known->second.secsTo(QDateTime::currentDateTimeUtc()) > 300) {  // looked up again after 5 minutes
            const QList<QHostAddress> addresses = QHostInfo::fromName(configured).addresses();
            if (addresses.isEmpty())
                return false;  // not kept: the next association looks it up again
            known = m_resolved.insert(configured, {addresses, QDateTime::currentDateTimeUtc()});
        }
        return std::any_of(known->first.begin(), known->first.end(), [&](const QHostAddress &a) { return a.isEqual(from, QHostAddress::TolerantConversion); });
    }
    std::mutex m_callersMutex;
    QList<QPair<QString, QString>> m_callers;
    bool m_anyCaller = false;
    QHash<QString, QPair<QList<QHostAddress>, QDateTime>> m_resolved;  ///< under m_callersMutex: addresses, when looked up

    // The association being served (one at a time, on the listener's thread).
    QString m_originator, m_caller;
    QString m_why;  ///< why the last check refused
    mutable std::pair<OFString, ErrorCode> m_notKept;  ///< the instance just received, when it was not kept
};

/// A TCP socket listening on `address`:`port` (IPv4), or an error in words.
Result<int> listenOn(const QString &address, quint16 port)
{
    sockaddr_in where{};
    where.sin_family = AF_INET;
    where.sin_port = htons(port);
    if (::inet_pton(AF_INET, address.toLatin1().constData(), &where.sin_addr) != 1)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("'%1' is not an IPv4 address (the Storage SCP listens over IPv4)").arg(address));
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return Error(ErrorCode::Io, QStringLiteral("cannot make a socket: %1").arg(QString::fromLocal8Bit(std::strerror(errno))));
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, reinterpret_cast<sockaddr *>(&where), sizeof where) != 0 || ::listen(fd, SOMAXCONN) != 0) {
        const int why = errno;
        ::close(fd);
        return Error(why == EADDRINUSE ? ErrorCode::Busy : ErrorCode::Io,
                     QStringLiteral("cannot listen on %1 port %2: %3%4")
                         .arg(address).arg(port).arg(QString::fromLocal8Bit(std::strerror(why)),
                                                     why == EADDRNOTAVAIL ? QStringLiteral(" (not an address of this machine)") : QString()));
    }
    return fd;
}

/// A port of every address no one listens on now, for DCMTK's own listener until ours replaces it.
quint16 unusedPort()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in where{};
    where.sin_family = AF_INET;
    where.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof where;
    quint16 port = 0;
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr *>(&where), sizeof where) == 0
        && ::getsockname(fd, reinterpret_cast<sockaddr *>(&where), &length) == 0)
        port = ntohs(where.sin_port);
    if (fd >= 0)
        ::close(fd);
    return port;
}

} // namespace

struct StorageScp::Private
{
    std::unique_ptr<DcmTLSTransportLayer> tls;  // declared first: it outlives the listener's network
    StorageListener listener;
    std::unique_ptr<QThread> thread;
    std::mutex handlerMutex;
    std::function<Error(const ReceivedInstance &)> handler;
    struct ClaimEntry
    {
        int id;
        int rank;
        Claim claim;
    };
    std::vector<ClaimEntry> claims;  ///< highest rank first
    int nextClaim = 1;
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

int StorageScp::addClaim(Claim claim, int rank)
{
    std::lock_guard<std::mutex> lock(d->handlerMutex);
    const int id = d->nextClaim++;
    const auto at = std::find_if(d->claims.begin(), d->claims.end(), [rank](const Private::ClaimEntry &c) { return c.rank < rank; });
    d->claims.insert(at, Private::ClaimEntry{id, rank, std::move(claim)});
    return id;
}

void StorageScp::removeClaim(int id)
{
    std::lock_guard<std::mutex> lock(d->handlerMutex);
    d->claims.erase(std::remove_if(d->claims.begin(), d->claims.end(), [id](const Private::ClaimEntry &c) { return c.id == id; }), d->claims.end());
}

void StorageScp::setCallers(const QList<QPair<QString, QString>> &callers, bool anyCaller)
{
    m_options.callers = callers;
    m_options.anyCaller = anyCaller;
    d->listener.setCallers(callers, anyCaller);
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
    // Patients' images on their way in: this user's alone, like the cache they go to (what an older version
    // made 0755 too).
    if (QFileInfo(m_options.directory).ownerId() == ::geteuid())
        QFile::setPermissions(m_options.directory, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
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
    l.ourAeTitle = m_options.aeTitle;
    l.setCallers(m_options.callers, m_options.anyCaller);
    l.refused = [self, toSelf](const QString &what) { toSelf->post([self, what] { Q_EMIT self->refused(what); }); };
    l.stored = [weak, self, toSelf](const ReceivedInstance &instance) -> Error {
        auto p = weak.lock();
        if (!p)
            return Error(ErrorCode::Cancelled, QStringLiteral("the Storage SCP is stopping"));
        Error e;
        {
            std::lock_guard<std::mutex> lock(p->handlerMutex);
            for (const auto &c : p->claims) {
                if (c.claim(instance))
                    return Error();  // the claimer's now
            }
            if (p->handler)
                e = p->handler(instance);
        }
        toSelf->post([self, instance, e] {
            if (e.isError())
                Q_EMIT self->failed(e);
            else
                Q_EMIT self->instanceReceived(instance);
        });
        return e;
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
    const bool oneAddress = !m_options.address.isEmpty() && m_options.address != QLatin1String("0.0.0.0");
    if (oneAddress) {
        // DCMTK 3.6.7 listens on every address: ours, on the one address, takes the place of its listener.
        Result<int> own = listenOn(m_options.address, m_options.port);
        if (!own.isOk())
            return own.error().withContext(QStringLiteral("Storage SCP %1").arg(ae));
        if (l.ownListenSocket >= 0)
            ::close(l.ownListenSocket);
        l.ownListenSocket = own.value();
        OFCondition c = EC_IllegalCall;
        for (int attempt = 0; attempt < 5 && c.bad(); ++attempt) {  // a port taken between asking and binding: another
            l.setPort(unusedPort());
            c = l.openListenPort();
        }
        if (c.bad()) {
            ::close(l.ownListenSocket);
            l.ownListenSocket = -1;
            return dimseError(c, QStringLiteral("Storage SCP %1").arg(ae));
        }
    } else if (OFCondition c = l.openListenPort(); c.bad()) {
        return dimseError(c, QStringLiteral("Storage SCP %1 on port %2").arg(ae).arg(m_options.port));
    }
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
    if (d->listener.ownListenSocket >= 0) {  // never put in place: the listener ended first
        ::close(d->listener.ownListenSocket);
        d->listener.ownListenSocket = -1;
    }
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "archives/dimse/dimsearchive.h"

#include "archives/fetchjob.h"

#include "spectrum/core/logging.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/exchange/listenaddress.h"
#include "spectrum/stores/archives/storeregistry.h"

#include <QFile>
#include <QHash>
#include <QPointer>
#include <QTimer>

#include <QDir>
#include <QTemporaryDir>

namespace spectrum {

Result<DimseEndpoint> dimseEndpointFor(const StoreConfig &s, const StoreConfigFile &config)
{
    const DimseSettings *dimse = s.ifKind<DimseSettings>();
    if (!dimse)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("store '%1' is not a DIMSE store").arg(s.name));
    DimseEndpoint ep;
    ep.host = dimse->host;
    ep.port = quint16(dimse->port);
    ep.calledAeTitle = dimse->aeTitle;
    ep.callingAeTitle = dimse->ourAeTitle.isEmpty() ? config.workstation.aeTitle : dimse->ourAeTitle;
    ep.timeoutSeconds = s.timeoutSeconds;
    ep.tls = dimse->tls;
    ep.caFile = dimse->caFile;
    if (dimse->tls) {  // the workstation's certificate, for a PACS that asks who we are
        ep.certificateFile = config.workstation.tlsCertificate;
        ep.keyFile = config.workstation.tlsKey;
    }
    return ep;
}

namespace {

/// C-GET of a study, series or instance: DCMTK writes each instance into a private folder as it streams in; each
/// file is checked and moved or copied (in the kernel) into place — never read whole into memory.
class DimseFetch : public FetchJob
{
public:
    DimseFetch(DimseClient *client, FetchRequest what, FetchOptions options, std::shared_ptr<FileStore> cache, Archive::Kept kept)
        : FetchJob(std::move(what), std::move(options), std::move(cache), std::move(kept)), m_client(client) {}

protected:
    void doStart() override
    {
        if (!makeIncoming())
            return finishWith(Error(ErrorCode::Io, QStringLiteral("cannot make a folder for incoming instances")));
        // Posted from DCMTK's thread: delivered only while the job lives.
        std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(this);
        auto *get = m_client->get(m_what.studyUid, m_what.seriesUid, m_what.sopUid, m_incoming->path(), [toJob, this](const ReceivedInstance &i) -> Error {
            toJob->post([this, path = i.path] { keepFile(path); });
            return Error();
        });
        QObject::connect(get, &Job::progress, this, [this](qint64, qint64 total) { setExpected(int(total)); });
        // The keeps were posted to this thread before the job's end was: they are pending by the time it is seen.
        addSubjob(get, [this](const Result<RetrieveCount> &r) {
            if (r.isOk() && r.value().failed > 0)  // the PACS said it could not send some: never a silent gap
                transferProblem(Error(ErrorCode::Protocol, QStringLiteral("the PACS could not send %1 instance(s)").arg(r.value().failed)));
            transferEnded(r.isOk() ? Error() : r.error());
        });
    }

    bool makeIncoming()
    {
        m_incoming = std::make_unique<QTemporaryDir>(m_options.outDir.isEmpty() ? QDir::tempPath() + QStringLiteral("/spectrum-get-XXXXXX")
                                                                               : QDir(m_options.outDir).filePath(QStringLiteral(".incoming-XXXXXX")));
        return m_incoming->isValid();
    }

    DimseClient *m_client;
    std::unique_ptr<QTemporaryDir> m_incoming;
};

/// The Storage SCP that C-MOVE fetches share when the process runs none (the command line): started by the first
/// fetch on the workstation's AE title and port, taking associations only from the PACS being moved from (a push
/// from anyone else is refused: nothing here would keep it), stopped when the last fetch lets go. On the job
/// threads' one thread (the registry's).
class SharedMoveScp
{
public:
    struct Held
    {
        std::shared_ptr<StorageScp> scp;
        QPair<QString, QString> caller;
        ~Held()
        {
            if (auto &callers = state().callers; callers.contains(caller) && --callers[caller] == 0)
                callers.remove(caller);
            if (scp)
                apply(*scp);
        }
    };

    static Result<std::unique_ptr<Held>> acquire(const WorkstationConfig &ws, const QPair<QString, QString> &pacs, int timeoutSeconds)
    {
        State &st = state();
        std::shared_ptr<StorageScp> scp = st.scp.lock();
        if (scp && (scp->options().aeTitle != ws.aeTitle || scp->options().port != quint16(ws.storagePort)))
            return Error(ErrorCode::Busy, QStringLiteral("another C-MOVE listens as %1 on port %2").arg(scp->options().aeTitle).arg(scp->options().port));
        ++st.callers[pacs];
        auto held = std::make_unique<Held>();
        held->caller = pacs;
        if (!scp) {
            st.directory = std::make_shared<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/spectrum-move-XXXXXX"));
            if (!st.directory->isValid())
                return Error(ErrorCode::Io, QStringLiteral("cannot make a folder for incoming instances"));
            StorageScp::Options o;
            o.aeTitle = ws.aeTitle;
            o.port = quint16(ws.storagePort);
            o.address = chooseListenAddress(ws, {{pacs.first, pacs.second}}).address;  // where the PACS reaches us
            o.directory = st.directory->path();
            o.timeoutSeconds = timeoutSeconds;
            o.certificateFile = ws.tlsCertificate;
            o.keyFile = ws.tlsKey;
            o.clientCaFile = ws.tlsClientCa;
            std::shared_ptr<QTemporaryDir> keep = st.directory;
            scp = std::shared_ptr<StorageScp>(new StorageScp(o), [keep](StorageScp *s) { delete s; });  // the folder outlives it
            // What no fetch claims (sent after its fetch ended, or for no one here) is not kept: the sender is told.
            scp->setHandler([](const ReceivedInstance &i) {
                QFile::remove(i.path);
                return Error(ErrorCode::NotAllowed, QStringLiteral("%1 from %2: no fetch here asked for it").arg(i.sopInstanceUid, i.callingAeTitle));
            });
            apply(*scp);
            if (Error e = scp->start(); e.isError())
                return e;  // `held` goes: the caller is counted off again
            st.scp = scp;
        }
        apply(*scp);
        held->scp = scp;
        return held;
    }

private:
    struct State
    {
        std::weak_ptr<StorageScp> scp;
        std::shared_ptr<QTemporaryDir> directory;
        QHash<QPair<QString, QString>, int> callers;  ///< the PACS being moved from, and by how many fetches
    };
    static State &state()
    {
        static State s;
        return s;
    }
    static void apply(StorageScp &scp) { scp.setCallers(state().callers.keys(), false); }
};

/// C-MOVE: the PACS is asked to send the study to this workstation's Storage SCP — the one the workstation runs,
/// or one started for this fetch (the command line). What arrives for us (the C-STORE names our AE title as its
/// Move Originator, or comes from the PACS asked) of the study (series, instance) asked for is claimed for this
/// fetch as it lands; pushes from elsewhere and other fetches' instances go their own way. Progress as the PACS reports it in its C-MOVE answers.
class DimseMove : public DimseFetch
{
public:
    DimseMove(DimseClient *client, FetchRequest what, FetchOptions options, std::shared_ptr<FileStore> cache, Archive::Kept kept,
              WorkstationConfig workstation, QPointer<StorageScp> running)
        : DimseFetch(client, std::move(what), std::move(options), std::move(cache), std::move(kept)), m_workstation(std::move(workstation)),
          m_scp(std::move(running))
    {
    }
    ~DimseMove() override { release(); }

protected:
    void doStart() override
    {
        const QString destination = m_workstation.aeTitle;
        const QString where = QStringLiteral("%1 at port %2 of this workstation").arg(destination).arg(m_workstation.storagePort);
        if (!m_scp || !m_scp->isRunning()) {
            // No Storage SCP in this process: the one C-MOVE fetches share, on the workstation's AE title and port.
            const DimseEndpoint &pacs = m_client->endpoint();
            Result<std::unique_ptr<SharedMoveScp::Held>> held = SharedMoveScp::acquire(m_workstation, qMakePair(pacs.calledAeTitle, pacs.host), pacs.timeoutSeconds);
            if (!held.isOk())
                return finishWith(Error(held.error().code(), QStringLiteral("C-MOVE needs this workstation's Storage SCP (%1) to receive the study, and it cannot listen: %2. "
                                                                          "If Spectrum or `spectrum-cli listen` is running here, it receives what the PACS moves; or fetch "
                                                                          "by C-GET (\"retrieve\": \"get\")")
                                                               .arg(where, held.error().message())));
            m_own = held.takeValue();
            m_scp = m_own->scp.get();
        } else if (m_scp->options().aeTitle != destination) {
            return finishWith(Error(ErrorCode::InvalidArgument, QStringLiteral("C-MOVE to %1, but this workstation's Storage SCP listens as %2")
                                                                    .arg(destination, m_scp->options().aeTitle)));
        }
        std::shared_ptr<DeliveryAddress> toJob = DeliveryAddress::of(this);
        const QString originator = m_client->endpoint().callingAeTitle, pacs = m_client->endpoint().calledAeTitle;
        const FetchRequest what = m_what;
        const int rank = !what.sopUid.isEmpty() ? 2 : !what.seriesUid.isEmpty() ? 1 : 0;  // the most precise request first
        m_claim = m_scp->addClaim([toJob, this, originator, pacs, what](const ReceivedInstance &i) {
            // Sent for us: the C-STORE names us as the one who moved it, or comes from the PACS asked (PixelMed
            // names itself as the originator; some PACS name no one).
            if (i.moveOriginatorAeTitle != originator && i.callingAeTitle != pacs)
                return false;  // a push from elsewhere
            QFile file(i.path);
            if (!file.open(QIODevice::ReadOnly))
                return false;
            const uchar *map = file.size() > 0 ? file.map(0, file.size()) : nullptr;
            if (!map)
                return false;
            const Result<DicomIdentity> id = readDicomIdentity(ByteView(reinterpret_cast<const char *>(map), file.size(), nullptr));
            if (!id.isOk() || id.value().studyInstanceUid != what.studyUid || (!what.seriesUid.isEmpty() && id.value().seriesInstanceUid != what.seriesUid)
                || (!what.sopUid.isEmpty() && id.value().sopInstanceUid != what.sopUid))
                return false;  // another fetch's
            // Posted to the fetch; should the fetch go before it is delivered (cancelled meanwhile), the file
            // goes with the undelivered call instead of lying in the incoming folder for ever.
            struct Unclaimed
            {
                QString path;
                bool taken = false;
                ~Unclaimed() { if (!taken) QFile::remove(path); }
            };
            auto unclaimed = std::make_shared<Unclaimed>();
            unclaimed->path = i.path;
            const bool posted = toJob->post([this, unclaimed] {
                unclaimed->taken = true;
                keepFile(unclaimed->path);
                arrived();
            });
            if (!posted)
                unclaimed->taken = true;  // not ours after all: the handler keeps it
            return posted;
        }, rank);
        auto *move = m_client->move(m_what.studyUid, m_what.seriesUid, m_what.sopUid, destination);
        QObject::connect(move, &Job::progress, this, [this](qint64, qint64 total) { setExpected(int(total)); });
        // A PACS that sends as it moves has had our C-STORE answers — given after each instance was posted here —
        // before its last C-MOVE answer: all is here by then. One that answers first and sends after (it queues the
        // move) said how many it completed: those are waited for, each arrival giving the wait its time again.
        addSubjob(move, [this, where](const Result<RetrieveCount> &r) {
            if (r.isOk() && r.value().failed > 0)
                transferProblem(Error(ErrorCode::Protocol, QStringLiteral("the PACS could not send %1 instance(s) to %2").arg(r.value().failed).arg(where)));
            Error e = r.isOk() ? Error() : r.error();
            if (e.code() == ErrorCode::InvalidArgument && e.message().contains(QLatin1String("does not know the move destination")))
                e = Error(ErrorCode::InvalidArgument, QStringLiteral("%1: add %2 (this workstation, port %3) to the PACS's DICOM destinations")
                                                          .arg(e.message(), m_workstation.aeTitle).arg(m_workstation.storagePort));
            else if (e.code() == ErrorCode::Authentication || (e.code() == ErrorCode::Network && e.message().contains(QLatin1String("calling AE titles they do not know"))))
                e = Error(e.code(), QStringLiteral("%1 — a C-MOVE also needs %2 (this workstation, port %3) among the PACS's DICOM destinations")
                                        .arg(e.message(), m_workstation.aeTitle).arg(m_workstation.storagePort));
            // Waited for only when nothing came before the answer: a PACS that sends as it moves has sent all by
            // then, and an instance another fetch's claim took (a first look at one image beside the study's
            // move) is not missing.
            if (e.isError() || m_arrived > 0 || r.value().completed <= 0)
                return endMove(e);
            m_announced = r.value().completed;
            m_where = where;
            qCInfo(lcStores) << "C-MOVE answered before its instances came:" << m_arrived << "of" << m_announced << "here; waiting for the rest";
            m_straggling.setSingleShot(true);
            m_straggling.setInterval(std::max(1, m_client->endpoint().timeoutSeconds) * 1000);
            QObject::connect(&m_straggling, &QTimer::timeout, this, [this] {
                endMove(Error(ErrorCode::Timeout, QStringLiteral("the PACS said it sent %1 instance(s) to %2, but %3 came within %4 s of the last")
                                                      .arg(m_announced).arg(m_where).arg(m_arrived).arg(m_straggling.interval() / 1000)));
            });
            m_straggling.start();
        });
    }

    /// One claimed instance handed to the fetch.
    void arrived()
    {
        ++m_arrived;
        if (m_announced < 0)
            return;
        if (m_arrived >= m_announced)
            return endMove(Error());
        m_straggling.start();  // its time again
    }

    void endMove(const Error &e)
    {
        m_straggling.stop();
        m_announced = -1;
        release();
        transferEnded(e);
    }

    void doCancel() override
    {
        m_straggling.stop();
        release();
        DimseFetch::doCancel();
    }

private:
    void release()
    {
        if (m_scp && m_claim)
            m_scp->removeClaim(m_claim);
        m_claim = 0;
        m_own.reset();  // the shared Storage SCP stops with the last fetch that held it
    }

    WorkstationConfig m_workstation;
    QPointer<StorageScp> m_scp;
    std::unique_ptr<SharedMoveScp::Held> m_own;
    int m_claim = 0;
    int m_arrived = 0;     ///< claimed instances handed to the fetch
    int m_announced = -1;  ///< what the PACS said it completed, while its instances are awaited after its answer
    QString m_where;
    QTimer m_straggling;   ///< no instance for this long while some are awaited: the fetch ends, saying so
};

} // namespace

DimseArchive::DimseArchive(StoreConfig config, StoreConfigFile all, std::shared_ptr<FileStore> cache, QObject *parent)
    : QueryArchive(std::move(config), std::move(all), std::move(cache), parent)
{
    Result<DimseEndpoint> ep = dimseEndpointFor(m_config, m_all);
    if (ep.isOk())
        m_client = new DimseClient(ep.value(), this);
    else
        m_endpointError = ep.error();
}

ResultJob<Done> *DimseArchive::test()
{
    return track(m_client ? m_client->echo() : failedJob<Done>(m_endpointError));
}

ResultJob<QList<DicomRecord>> *DimseArchive::find(const DicomQuery &query)
{
    return m_client ? m_client->find(query) : failedJob<QList<DicomRecord>>(m_endpointError);
}

ResultJob<FetchSummary> *DimseArchive::fetch(const FetchRequest &what, const FetchOptions &options, Kept kept)
{
    if (!m_client)
        return track(failedJob<FetchSummary>(m_endpointError));
    if (m_config.as<DimseSettings>().retrieve == QLatin1String("move"))
        return track(new DimseMove(m_client, what, options, m_cache, std::move(kept), m_all.workstation, m_moveDestination));
    return track(new DimseFetch(m_client, what, options, m_cache, std::move(kept)));
}

ResultJob<ExportSummary> *DimseArchive::send(const QStringList &files)
{
    if (!m_client)
        return track(failedJob<ExportSummary>(m_endpointError));
    return track(chainJob<ExportSummary>(m_client->store(files), [](const StoreCount &r, const CancelToken &) -> Result<ExportSummary> {
        ExportSummary out;
        out.stored = r.stored;
        out.failed = r.failed;
        return out;
    }));
}

} // namespace spectrum

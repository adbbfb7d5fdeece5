// SPDX-License-Identifier: Apache-2.0
#pragma once
// DIMSE with DCMTK: the classic DICOM network services against a PACS, and the workstation's own Storage SCP.
//
// Half-Sync/Half-Async (../shared/seeds/001_…): every association runs synchronously on core's blocking pool;
// results come back to the caller's thread as jobs (and signals, for the Storage SCP). Timeouts are always set
// (DCMTK's own DIMSE default is to wait forever), and Nagle's algorithm is off on every association we open or
// accept (DCMTK leaves it on unless TCP_NODELAY is set in the environment: 300 small instances took 13.7 s
// with it on and 0.37 s without).
//
// Received instances are written straight to files as they arrive (DCMTK's bit-preserving mode), never held
// whole in memory, and handed on by path.

#include "spectrum/core/dicomquery.h"
#include "spectrum/core/resultjob.h"

#include <QObject>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>

namespace spectrum {

struct DimseEndpoint
{
    QString host;
    quint16 port = 104;
    QString calledAeTitle;                            ///< the PACS's AE title
    QString callingAeTitle = QStringLiteral("SPECTRUM");  ///< ours
    int timeoutSeconds = 30;                          ///< connect, association and every DIMSE message
    /// DICOM TLS (PS3.15 B.9, the BCP 195 profile): the PACS's certificate must chain to `caFile` (PEM; empty:
    /// the system's CAs) and name `host`, or the association is refused.
    bool tls = false;
    QString caFile;
    /// Our certificate and private key (PEM), presented to a PACS that asks for one (mutual TLS); both or neither.
    QString certificateFile;
    QString keyFile;

    /// InvalidArgument for an empty host, port 0, or an AE title that is empty, longer than 16 characters or
    /// holds a backslash or control characters.
    Error validate() const;
};

/// An instance received over DIMSE, in a file of its own.
struct ReceivedInstance
{
    QString path;            ///< the file (Part 10); the receiver of the callback may move it
    QString sopClassUid;
    QString sopInstanceUid;
    QString callingAeTitle;  ///< who sent it (Storage SCP)
    /// Storage SCP: the AE title that asked for it by C-MOVE (the C-STORE's Move Originator), empty for a push.
    QString moveOriginatorAeTitle;
};

struct RetrieveCount
{
    int completed = 0;  ///< instances received (C-GET) or sent to the destination (C-MOVE)
    int failed = 0;
    int warning = 0;
    qint64 bytes = 0;   ///< C-GET: bytes of the received files
    double seconds = 0;
};

struct StoreCount
{
    QStringList stored;                       ///< SOP Instance UIDs
    QList<QPair<QString, QString>> failed;    ///< file (or SOP Instance UID) and why
};

/// 1–16 printable ASCII characters, not all spaces, no backslash (PS3.5 AE VR).
bool isValidAeTitle(const QString &aeTitle);

/// Ensures DCMTK's associations run without Nagle's algorithm. Called by everything here; call it yourself
/// before running DCMTK tools as child processes if they should inherit it.
void disableNagleForDcmtk();

class DimseClient : public QObject
{
    Q_OBJECT
public:
    explicit DimseClient(DimseEndpoint endpoint, QObject *parent = nullptr);

    const DimseEndpoint &endpoint() const { return m_endpoint; }

    /// C-ECHO ("test connection").
    ResultJob<Done> *echo();
    /// C-FIND: patients in the patient root model, studies, series and images in the study root model. Wildcards as the PACS supports them;
    /// limit/offset are applied to the answer (C-FIND has no paging) and a limit cancels the search once reached.
    ResultJob<QList<DicomRecord>> *find(const DicomQuery &query);
    /// C-GET of a study, series (seriesUid) or instance (both): the PACS sends the instances back on the same
    /// association. Each lands in a file under `directory` and is handed to `received` on the pool thread,
    /// one at a time, as soon as it is complete; an error from it fails that sub-operation.
    /// progress(instances done, instances total) as the PACS reports it.
    ResultJob<RetrieveCount> *get(const QString &studyUid, const QString &seriesUid, const QString &sopUid, const QString &directory,
                                  std::function<Error(const ReceivedInstance &)> received);
    /// C-MOVE to `destinationAeTitle` (which the PACS must know; for the workstation: its Storage SCP).
    ResultJob<RetrieveCount> *move(const QString &studyUid, const QString &seriesUid, const QString &sopUid, const QString &destinationAeTitle);
    /// C-STORE of DICOM files, one association for all; per-file results.
    ResultJob<StoreCount> *store(const QStringList &files);

private:
    DimseEndpoint m_endpoint;
};

/// The workstation's Storage SCP: accepts C-STORE (and C-ECHO) from the callers it is told (AE title and host),
/// called by its own AE title, for every storage SOP class, in the transfer syntaxes we decode. Each instance is
/// written straight to a file in `directory` and announced by instanceReceived() on the owner's thread; a handler
/// set with setHandler() runs first, on the association's thread. Its error is reported (failed()), but it does
/// not change the sender's answer: DCMTK 3.6.7's storage SCP decides on Success once the file is written, before
/// it calls the handler (a known gap, docs/ARCHITECTURE.md).
class StorageScp : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        QString aeTitle = QStringLiteral("SPECTRUM");
        quint16 port = 11112;
        /// The one IPv4 address of this machine to listen on (the interface the PACS reaches); empty: every
        /// address. DCMTK 3.6.7 listens over IPv4 only.
        QString address;
        QString directory;        ///< where received files land
        int timeoutSeconds = 30;
        /// DICOM TLS (BCP 195): with a certificate and key (PEM), associations are accepted over TLS only.
        QString certificateFile;
        QString keyFile;
        /// With TLS: callers must present a certificate that chains to this CA (PEM); empty: none is asked for.
        QString clientCaFile;
        /// Who may send: (calling AE title, host address) pairs; a host of "*" is any host. Associations from
        /// others, and those that call another AE title than ours, are refused and reported (refused()).
        QList<QPair<QString, QString>> callers;
        /// Any calling AE from anywhere (the callers list is not looked at): an administrator's explicit choice.
        bool anyCaller = false;
    };
    explicit StorageScp(Options options, QObject *parent = nullptr);
    ~StorageScp() override;  ///< stops and waits

    /// Binds (Options::address, port) and starts listening on its own thread; an error if it cannot be bound.
    Error start();
    /// Stops accepting, finishes the current association, returns when the listener has ended.
    void stop();
    bool isRunning() const;
    quint16 port() const { return m_options.port; }

    void setHandler(std::function<Error(const ReceivedInstance &)> handler);

    /// A claim on instances that arrive (a fetch by C-MOVE waiting for its study): run on the association's thread
    /// before the handler, those of a higher `rank` first (an instance's fetch before its series', before its
    /// study's), then in the order added; the first that returns true takes the instance — its file is left where
    /// it landed for the claimer, the handler does not see it and instanceReceived() is not emitted.
    using Claim = std::function<bool(const ReceivedInstance &)>;
    int addClaim(Claim claim, int rank = 0);
    void removeClaim(int id);
    const Options &options() const { return m_options; }
    /// Who may call from now on (Options::callers, anyCaller): a configuration changed while it listens.
    void setCallers(const QList<QPair<QString, QString>> &callers, bool anyCaller);

Q_SIGNALS:
    void instanceReceived(const spectrum::ReceivedInstance &instance);
    void failed(const spectrum::Error &error);
    /// An association refused: who called (AE title, address) and why — also logged.
    void refused(const QString &what);

private:
    struct Private;
    Options m_options;
    std::shared_ptr<Private> d;
};

} // namespace spectrum

Q_DECLARE_METATYPE(spectrum::ReceivedInstance)

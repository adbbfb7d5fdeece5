// SPDX-License-Identifier: Apache-2.0
#pragma once
// FetchJob: what every archive's fetch has in common — each instance that arrives is checked (a well-formed
// instance of the study asked for, of the study's one patient) and kept in the cache (or a folder) off the
// job's thread; the job counts what was kept, drops what another request brought first (HeldKeys), and ends
// once the transfer and every pending write are done. Each archive's fetch (dicomwebarchive.cpp: the stream
// and the per-series plan; dimsearchive.cpp: C-GET; blobdarchive.cpp: pulls) is a subclass that starts its
// transfer in doStart() and hands what arrives to keep(), keepOnReader() or keepFile(). Private to stores.

#include "spectrum/core/compoundjob.h"
#include "spectrum/stores/archives/archive.h"

#include <QElapsedTimer>

namespace spectrum {

/// An instance a fetch brought: who it is, and its bytes when they were in memory (for the viewer).
struct KeptInstance
{
    DicomIdentity id;
    ByteView bytes;        ///< empty when it arrived as a file, or went to a folder
    bool already = false;  ///< held before it came (HeldKeys): dropped unread
};

class FetchJob : public CompoundJob<FetchSummary>
{
public:
    FetchJob(FetchRequest what, FetchOptions options, std::shared_ptr<FileStore> cache, Archive::Kept kept);

protected:
    /// A whole instance in memory: checked and kept on keepingPool().
    void keep(const ByteView &bytes);
    /// The same, to be called on the thread that read the instance (RetrieveCallbacks::completeOnReader):
    /// checked and kept there at once, reported back here with one posted call. Only into the cache, where an
    /// instance is an append to a pack: creating a file per instance (--out) on the reading thread held the
    /// reading up (0.41 s against 0.22 s).
    std::function<Error(const ByteView &)> keeperOnReader();
    /// An instance that arrived as a file: looked at through a read-only mapping, renamed into the folder or
    /// copied into the cache inside the kernel, on keepingPool(). The file is gone afterwards either way.
    void keepFile(const QString &path);
    /// The transfer is over (with `e` when it failed): the job ends once every pending write is done.
    void transferEnded(const Error &e);
    /// Something went wrong on the way, but the transfer goes on.
    void transferProblem(const Error &e);
    /// A server of a mirrored archive sent instances, or stopped answering (FetchSummary::servers, serversLost).
    void noteServer(const QString &server, bool lost = false)
    {
        QStringList &list = lost ? m_summary.serversLost : m_summary.servers;
        if (!list.contains(server))
            list << server;
    }
    /// How many instances the transfer will bring, when it knows (progress).
    void setExpected(int instances) { m_expected = instances; }

    const FetchRequest m_what;
    const FetchOptions m_options;
    std::shared_ptr<FileStore> m_cache;

private:
    void kept(Result<KeptInstance> &&k, qint64 size);
    void finishIfDone();

    Archive::Kept m_onKept;
    QElapsedTimer m_clock;
    FetchSummary m_summary;
    QString m_patientId;  ///< the first instance's; later ones must agree
    Error m_error;
    int m_pendingWrites = 0;
    double m_firstCompleteSeconds = -1;
    bool m_transferDone = false;
    int m_expected = 0;
    QSet<QString> m_counted;  ///< SOP Instance UIDs counted: one that arrives twice (a stream that gave way) counts once
};

/// Checks and keeps one instance (a whole DICOM file in memory) in the cache or as OUT/SOP.dcm. Any thread.
Result<KeptInstance> keepInstance(const ByteView &bytes, const FetchRequest &what, const FetchOptions &options, FileStore *cache);

} // namespace spectrum

#pragma once
// MprVolume: a series of an open study made into a Volume for the MPR panes. The slices' headers are read first
// (the geometry, before any pixel: a slice not in the cache yet is placed by the position the study's listing
// gives it), then every slice is decoded on the pool into its slot — those the memory cache holds already taken
// from it, never decoded twice — and slices still arriving go in as the streamer brings them. Tells the panes each
// time more is in, so a coronal plane of a study still streaming fills in row by row.

#include "imagememorycache.h"

#include "spectrum/imaging/volume.h"
#include "spectrum/stores/studycatalog.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QTimer>

#include <memory>

namespace spectrum {

class BlobStore;

class MprVolume : public QObject
{
    Q_OBJECT
public:
    /// `store` (read on the pool: the workstation's cache) and `images` outlive this. `memoryLimit`: what the volume
    /// may take in memory (more lives in a file in `spillFolder`).
    MprVolume(BlobStore *store, ImageMemoryCache *images, const SeriesSummary &series, qint64 memoryLimit, const QString &spillFolder,
              QObject *parent = nullptr);
    ~MprVolume() override;

    /// Reads the headers, makes the volume (ready() or refused()), then fills it.
    void start();
    const SeriesSummary &series() const { return m_series; }
    /// Null until ready().
    std::shared_ptr<Volume> volume() const { return m_volume; }
    QString refusal() const { return m_refusal; }
    /// Whether every slot that can fill has (none arriving or being decoded).
    bool isComplete() const;
    /// Milliseconds from start() to ready().
    qint64 msToReady() const { return m_msToReady; }

    /// An instance of the study is in the cache now (from the study's streamer): decoded into its slot when it is
    /// one of this volume's slices.
    void onInstanceCached(const QString &key);
    /// An instance could not be fetched: its slot stays empty, marked refused with why.
    void onInstanceFailed(const QString &key, const QString &why);

Q_SIGNALS:
    void ready();
    void refused(const QString &why);
    /// More slots are in (at most every 40 ms while slices pour in, and once when the last is).
    void filled();

private:
    struct Header;
    void makeVolume(QList<Header> headers);
    /// Decodes instance `key` (or takes it from the memory cache) into the slots of its slices, on the pool.
    void fillFrom(const QString &key);
    void noteFilled();

    BlobStore *m_store;
    ImageMemoryCache *m_images;
    SeriesSummary m_series;
    qint64 m_memoryLimit;
    QString m_spillFolder;
    std::shared_ptr<Volume> m_volume;
    QString m_refusal;
    QHash<QString, QList<std::pair<int, int>>> m_slicesOf;  ///< instance key → (slice index, frame) in the volume
    QSet<QString> m_filling;                               ///< instances being decoded into it
    QSet<QString> m_done;                                  ///< instances whose slots are filled (or refused)
    bool m_waitingForFirst = false;                        ///< listed and placed, none here yet
    QSet<QString> m_early;                                 ///< cached while the headers were read
    QHash<QString, QString> m_earlyFailures;               ///< failed meanwhile, and why
    QTimer m_notify;                                       ///< filled(), at most every 40 ms
    QElapsedTimer m_clock;
    qint64 m_msToReady = -1;
};

} // namespace spectrum

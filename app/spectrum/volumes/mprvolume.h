// SPDX-License-Identifier: Apache-2.0
#pragma once
// MprVolume: a series of an open study made into a Volume for the MPR panes.
//
// A listed series (start()): the slices' headers are read first — the geometry, before any pixel: a slice not in the
// cache yet is placed by the position the study's listing gives it —, then every slice is decoded on the pool into
// its slot (those the memory cache holds already taken from it, never decoded twice), and slices still arriving go
// in as the streamer brings them.
//
// A series not listed yet (startArriving(): the study opened on its first look, the archive still streaming it): laid
// out from the slices as they arrive, each by its own header (ArrivingVolume), so a coronal plane fills in while
// the archive is still listing the study. relist() then lays it out for good from the listing, keeping every slot
// in, and checks each against the listing.
//
// A slice the listing does not place (an archive whose C-FIND answer leaves out Image Position) and not in the cache
// yet when the volume is laid out is left out, said in the volume's notes, and the volume is laid out again — keeping
// what is in — when it comes: the volume is not complete until it has come or failed.
//
// Tells the panes each time more is in, so a plane of a study still streaming fills in row by row.

#include "viewer/imagememorycache.h"

#include "spectrum/core/bytes.h"
#include "spectrum/imaging/volumes/arrivingvolume.h"
#include "spectrum/imaging/volumes/volume.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QSet>
#include <QTimer>

#include <memory>
#include <optional>

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

    /// The series as listed: reads the headers, makes the volume (ready() or refused()), then fills it.
    void start();
    /// The series before its listing (only the instances the first look found; listedInstances says how many are
    /// coming), of the study and patient `study` names: laid out from its slices as they come (onInstanceBytes),
    /// those in the cache already first. ready() each time it is laid out again.
    void startArriving(const DicomIdentity &study);
    /// The study's listing came: `series` as listed. The volume is laid out for good (ready() again), every slot
    /// come so far kept where the listing agrees.
    void relist(const SeriesSummary &series);
    /// Laid out from the slices come so far, before the listing.
    bool isArriving() const { return m_arriving != nullptr; }
    /// Why there is no volume yet while the series arrives (empty otherwise).
    QString waitingFor() const { return m_waiting; }

    const SeriesSummary &series() const { return m_series; }
    /// Null until ready(); a new one after each ready().
    std::shared_ptr<Volume> volume() const { return m_volume; }
    QString refusal() const { return m_refusal; }
    /// Whether every slot that can fill has (none arriving or being decoded), the series listed.
    bool isComplete() const;
    /// Milliseconds from start() (or startArriving()) to the first ready().
    qint64 msToReady() const { return m_msToReady; }

    /// The slice MPR opens at (the one the pane showed): focusPoint() is its centre once it is in the volume.
    void setFocus(const QString &key) { m_focus = key; }
    std::optional<Vector3> focusPoint() const;

    /// An instance of the study is in the cache now (from the study's streamer): decoded into its slot when it is
    /// one of this volume's slices.
    void onInstanceCached(const QString &key);
    /// An instance's bytes came (before the listing, any instance the archive sends): put into the arriving volume
    /// when it is one of the series'.
    void onInstanceBytes(const QString &key, const ByteView &bytes);
    /// An instance could not be fetched: its slot stays empty, marked refused with why.
    void onInstanceFailed(const QString &key, const QString &why);

Q_SIGNALS:
    /// volume() is laid out (again).
    void ready();
    void refused(const QString &why);
    /// No volume yet while the series arrives: why (one slice so far…).
    void waiting(const QString &why);
    /// More slots are in (at most every 40 ms while slices pour in, and once when the last is).
    void filled();

private:
    struct Header;
    struct Layout;
    /// Reads the headers not known yet, lays the volume out and carries over what `arrived` holds, on the pool:
    /// its voxels taken over when `adopt` (it is no longer written) and it is laid out the same, else copied.
    void layOutListed(const ArrivingVolume::Snapshot &arrived, bool adopt = true);
    /// Lays the listed series out again (a slice left out has come), carrying over the slots filled so far.
    void layOutAgain();
    /// Whether instance `key` is one of the series' as listed.
    bool isOfSeries(const QString &key) const;
    void apply(Layout &&layout);
    void onAdded(const ArrivingVolume::Added &added);
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
    QString m_focus;
    QHash<QString, QList<std::pair<int, int>>> m_slicesOf;  ///< instance key → (slice index, frame) in the volume
    QSet<QString> m_filling;                               ///< instances being decoded into it
    QSet<QString> m_done;                                  ///< instances whose slots are filled (or refused)
    bool m_layingOut = false;                              ///< headers being read, the volume being made
    int m_generation = 0;                                  ///< of the layout under way (an older one's answer is dropped)
    bool m_waitingForFirst = false;                        ///< listed and placed, none here yet
    QSet<QString> m_early;                                 ///< cached while it was laid out
    QHash<QString, ImageInfo> m_headers;                   ///< the headers the volume was laid out from
    QHash<QString, QString> m_failed;                      ///< could not be fetched, and why (refused in every layout)
    QSet<QString> m_leftOut;                               ///< not placed by the listing nor in the cache yet: may come
    QHash<QString, QString> m_earlyFailures;               ///< failed meanwhile, and why
    std::shared_ptr<ArrivingVolume> m_arriving;            ///< before the listing
    QSet<QString> m_arrivingKeys;                          ///< instances given to it (or being decoded for it)
    QString m_waiting;
    QString m_refusalUnlessMoreCome;                       ///< why there is no volume of what is in, while slices still come
    QTimer m_notify;                                       ///< filled(), at most every 40 ms
    QElapsedTimer m_clock;
    qint64 m_msToReady = -1;
};

} // namespace spectrum

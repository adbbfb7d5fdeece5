// SPDX-License-Identifier: Apache-2.0
#pragma once
// ImageExporter: the image or series in view as pictures — PNG or JPEG files, or the series (or a multi-frame
// image's frames) as an MP4 cine — with the overlay (exactly what the pane shows: the findings, the corner texts,
// the window) or without it (the image alone at its own resolution, pixels made square by stretching the wider
// spacing, under the window in use). Pictures are for
// slides and teaching, not for reading: they say which patient they show when the overlay is on, and never claim
// to be DICOM.
//
// Without the overlay, the images are read from the cache and windowed on the pool; with it, the pane steps through
// the series and each slice is taken once it is whole on screen. finished() says how many files were written.

#include "spectrum/core/result.h"

#include <QObject>
#include <QPointer>
#include <QStringList>

namespace spectrum {

class BlobStore;
class StudyViewer;

struct ImageExportOptions
{
    enum class What { ImageInView, Series };
    enum class Format { Png, Jpeg, Mp4 };
    What what = What::ImageInView;
    Format format = Format::Png;
    bool withOverlay = true;
    int jpegQuality = 92;
    double framesPerSecond = 10;  ///< MP4
    /// PNG/JPEG: the folder the files go into (IMAGE-0001.png…), or for one image the file itself; MP4: the file.
    QString target;
};

class ImageExporter : public QObject
{
    Q_OBJECT
public:
    /// Exports from `viewer`'s active pane; `cache` holds the study's images.
    ImageExporter(StudyViewer *viewer, BlobStore *cache, ImageExportOptions options, QObject *parent = nullptr);
    void start();

Q_SIGNALS:
    /// Done: `files` written (one MP4 counts once), or why not.
    void finished(int files, const spectrum::Error &error);

private:
    void exportImageInView();
    void exportSeriesFromCache();
    void stepAndGrab();
    void grabCurrent();
    void finish(int files, const Error &error);
    QString fileFor(int index) const;

    QPointer<StudyViewer> m_viewer;
    BlobStore *m_cache;
    ImageExportOptions m_options;
    QStringList m_keys;          ///< the series' instances, in order
    int m_next = 0;              ///< stepping: the slice to take next
    int m_written = 0;
    QMetaObject::Connection m_shown;
    bool m_done = false;
};

} // namespace spectrum

#pragma once
// FindingsModel: what has been drawn on a study's images, and what reports about them say — one list a study
// viewer's panes share. A pane shows the findings on the image (and frame) it shows; the findings panel lists them
// all; File ▸ Save findings writes those drawn or changed here as a Structured Report.
//
// Findings are kept per image: the image's SOP Instance UID (the viewport's key when an image has none) and, for a
// multi-frame image, its frame. They are never moved to another image: a finding belongs to what it was drawn on.

#include "spectrum/imaging/annotation.h"

#include <QHash>
#include <QObject>
#include <QStringList>

namespace spectrum {

struct Finding
{
    Annotation annotation;
    ImageRef image;
    /// Empty: drawn here. Otherwise the report it was read from, as the reader is shown it ("SR 2026-11-24
    /// Reader^Rita"), and that report's SOP Instance UID.
    QString origin;
    QString originUid;
    QList<MeasuredValue> reportedValues;  ///< read back: the values as the report gives them
    QStringList otherValues;              ///< read back: values the workstation does not recognise, as written
    QString label;                        ///< the report's tracking identifier, when read back
    QList<MeasuredValue> measuredValues;  ///< as last measured on its image where it is shown (empty until then)
    bool changed = false;                 ///< drawn or edited here and not saved since

    bool fromReport() const { return !origin.isEmpty(); }
};

class FindingsModel : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    /// The key findings on the image `info` describes are kept under (SOP Instance UID or `fallbackKey`, and the
    /// frame of a multi-frame image).
    static QString keyFor(const ImageInfo &info, const QString &fallbackKey);
    /// The same for an image reference read from a report.
    static QString keyFor(const ImageRef &ref);

    QList<Finding> on(const QString &imageKey) const { return m_findings.value(imageKey); }
    /// Every finding, image by image in the order they were first drawn on.
    QList<Finding> all() const;
    int count() const;
    /// Findings drawn or edited here and not saved.
    int unsavedCount() const;

    /// Adds a finding on `imageKey`; returns its index there.
    int add(const QString &imageKey, Finding finding);
    /// Replaces the annotation of finding `index` on `imageKey` (an edit: it is changed, to be saved).
    void setAnnotation(const QString &imageKey, int index, const Annotation &annotation);
    void remove(const QString &imageKey, int index);
    void clear(const QString &imageKey);
    /// The findings of a report, replacing those read from the same report before. Returns how many were added.
    int addFromReport(const QString &reportUid, const QList<Finding> &findings);
    bool hasReport(const QString &reportUid) const { return m_reports.contains(reportUid); }
    /// After a save: those findings are saved (no longer changed).
    void markSaved(const QList<QString> &trackingUids);
    /// What finding `index` on `imageKey` measures on its image as shown (the viewport tells, once per change).
    void setMeasured(const QString &imageKey, int index, const QList<MeasuredValue> &values);
    /// Gives every finding without a tracking UID one (before it is first saved).
    void assignTrackingUids();

Q_SIGNALS:
    /// Findings on `imageKey` changed (added, edited, removed); empty: many images at once.
    void changed(const QString &imageKey);
    /// Values measured anew (setMeasured): for lists, not for the images (nothing drawn changes).
    void measured();

private:
    QHash<QString, QList<Finding>> m_findings;
    QStringList m_order;   ///< image keys, in the order first drawn on
    QStringList m_reports; ///< reports read in
};

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#pragma once
// FindingsModel: what has been drawn on a study's images, and what reports about them say — one list a study
// viewer's panes share. A pane shows the findings on the image (and frame) it shows; the findings panel lists them
// all; File ▸ Save findings writes those drawn or changed here as a Structured Report.
//
// Findings are kept per image: the image's SOP Instance UID (the viewport's key when an image has none) and, for a
// multi-frame image, its frame. They are never moved to another image: a finding belongs to what it was drawn on.

#include "spectrum/imaging/tools/annotation.h"
#include "spectrum/imaging/documents/keyobjects.h"
#include "spectrum/imaging/documents/presentationstate.h"

#include <QHash>
#include <QObject>
#include <QUndoStack>
#include <QStringList>

#include <algorithm>

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

/// A set of key images read from a Key Object Selection document of the study.
struct KeySelection
{
    QString uid;                 ///< the document's SOP Instance UID
    KeyObjectSelection document;
    QString origin;              ///< "KO 2026-11-24 Reader^Rita"
};

/// A presentation state of the study, applied on request.
struct PresentationEntry
{
    QString uid;                 ///< its SOP Instance UID
    PresentationState state;
    QString origin;              ///< "PR 2026-11-24 Reader^Rita"
};

class FindingsModel : public QObject
{
    Q_OBJECT
public:
    explicit FindingsModel(QObject *parent = nullptr);

    /// The key findings on image `ref` are kept under: its SOP Instance UID, and the frame of a multi-frame image.
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
    /// After a save: those findings are saved (no longer changed).
    void markSaved(const QList<QString> &trackingUids);
    /// What finding `index` on `imageKey` measures on its image as shown (the viewport tells, once per change).
    void setMeasured(const QString &imageKey, int index, const QList<MeasuredValue> &values);
    // Key images: those marked here (to be saved as a Key Object Selection) and the study's own selections.
    /// Marks (or unmarks) the image `ref` (and frame) as a key image here. Unmarking an image of a saved key image
    /// selection ("Of Interest") takes it out of that selection here; the save then replaces the selection (a new one
    /// without it, and a rejection note withdrawing the old).
    void setKeyImage(const ImageRef &ref, bool key);
    /// Whether `ref` is a key image: marked here or in a selection of the study, and not unmarked here.
    bool isKeyImage(const ImageRef &ref) const;
    /// Whether `ref` can be unmarked: marked here, or a key image of an "Of Interest" selection this reader made
    /// (other titles — "For Teaching"… — and other readers' selections are not edited here).
    bool canUnmarkKeyImage(const ImageRef &ref) const;
    /// What a save writes as key images: those marked here and, when an image of a selection was unmarked, the
    /// rest of every selection that listed it (which the save replaces).
    QList<ImageRef> keyImagesToSave() const;
    /// The selections a save replaces: those listing an image unmarked here.
    QList<KeySelection> replacedKeySelections() const;
    /// After a save: `written` (the new selection, if any) is one of the study's; the replaced ones are withdrawn;
    /// the marks and unmarks the save wrote (`marks`, `unmarks`: as they were when it began) are done with.
    void keyImagesSaved(const QList<KeySelection> &written, const QStringList &withdrawnUids, const QString &why,
                        const QList<ImageRef> &marks, const QList<ImageRef> &unmarks);
    /// Images of the study's selections unmarked here.
    QList<ImageRef> unmarkedKeyImages() const { return m_unmarked; }
    /// The reading physician here (DICOM PN): only selections they made are edited here.
    void setReaderName(const QString &name) { m_readerName = name; }
    /// Documents of the study (SR, KO, PR) withdrawn by a rejection note: taken out, and not taken again when read.
    void withdraw(const QStringList &uids, const QString &why);
    /// Images a rejection note rejects: never key images, not shown (the study viewer leaves them out), listed.
    void rejectImages(const QList<ImageRef> &images, const QString &why);
    /// Why `ref` is rejected (empty: it is not).
    QString rejectionOf(const ImageRef &ref) const;
    /// The documents withdrawn, SOP Instance UID → why.
    const QHash<QString, QString> &withdrawnDocuments() const { return m_withdrawn; }
    /// The images rejected, SOP Instance UID → why.
    const QHash<QString, QString> &rejectedImages() const { return m_rejected; }
    /// The note a save writes with the key images: the one typed here, else that of the selection it replaces.
    QString keyNoteToSave() const;
    /// Whether `ref` was marked here.
    bool isMarkedKeyImage(const ImageRef &ref) const
    {
        return std::any_of(m_marked.begin(), m_marked.end(), [&](const ImageRef &r) { return r.sameImage(ref); });
    }
    /// The images marked here, in the order marked.
    QList<ImageRef> markedKeyImages() const { return m_marked; }
    /// Whether the marks changed since saved (or since the study opened).
    bool keyImagesChanged() const { return m_keyChanged; }
    /// Whether images of the study's selections were unmarked here (a save replaces those selections).
    bool hasUnmarkedKeyImages() const { return !m_unmarked.isEmpty(); }
    QString keyNote() const { return m_keyNote; }
    void setKeyNote(const QString &note);
    /// A selection read from the study (replacing one of the same UID).
    void addKeySelection(const KeySelection &selection);
    const QList<KeySelection> &keySelections() const { return m_keySelections; }

    /// A presentation state read from the study (replacing one of the same UID).
    void addPresentationState(const PresentationEntry &entry);
    const QList<PresentationEntry> &presentationStates() const { return m_presentations; }
    const PresentationEntry *presentationState(const QString &uid) const;

    /// Gives every finding without a tracking UID one (before it is first saved).
    void assignTrackingUids();

    /// The reader's edits of the findings (draw, move, edit, delete, clear), to undo and redo (Edit menu): one
    /// stack per study, as each open study has its model. Findings read from reports are not edits.
    QUndoStack *undoStack() const { return m_undo; }
    /// A drag ended: the next change of the same finding is a step of its own (a drag is one, however many moves).
    void endEdit() { ++m_gesture; }
    /// Puts the findings on `imageKey` back as `findings` (an undo or redo): those that differ from what is there
    /// now are to be saved again.
    void restore(const QString &imageKey, QList<Finding> findings);

Q_SIGNALS:
    /// Findings on `imageKey` changed (added, edited, removed); empty: many images at once.
    void changed(const QString &imageKey);
    /// The findings on `imageKey` were put back by an undo or redo: indices into them no longer hold.
    void restored(const QString &imageKey);
    /// Values measured anew (setMeasured): for lists, not for the images (nothing drawn changes).
    void measured();
    /// Key images marked or unmarked here, or a selection read.
    void keyImagesUpdated();
    /// A presentation state was read.
    void presentationStatesChanged();

private:
    /// Whether a selection of the study is edited here: "Of Interest", made by this reader.
    bool isEditable(const KeySelection &k) const;

    QHash<QString, QList<Finding>> m_findings;
    QStringList m_order;   ///< image keys, in the order first drawn on
    QList<ImageRef> m_marked;
    QList<ImageRef> m_unmarked;  ///< images of the study's selections unmarked here, as those selections name them
    QString m_readerName;
    QHash<QString, QString> m_withdrawn;  ///< documents withdrawn by a rejection note → why
    QHash<QString, QString> m_rejected;   ///< images rejected by a rejection note (SOP Instance UID) → why
    bool m_keyChanged = false;
    QString m_keyNote;
    QList<KeySelection> m_keySelections;
    QList<PresentationEntry> m_presentations;
    /// Records the change of `imageKey` from `before` to what it holds now as one undoable step (`moving`: the
    /// finding a drag moves, merged with the drag's other moves; −1: a step of its own).
    void record(const QString &imageKey, const QList<Finding> &before, const QString &what, int moving = -1);
    QUndoStack *m_undo;
    QHash<QString, Annotation> m_saved;  ///< tracking UID → the finding as last saved or read from a report
    int m_gesture = 0;
    bool m_restoring = false;
};

} // namespace spectrum

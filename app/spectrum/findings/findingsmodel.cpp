// SPDX-License-Identifier: Apache-2.0
#include "findings/findingsmodel.h"

#include "spectrum/core/uid.h"

#include <QScopedValueRollback>
#include <QSet>
#include <QUndoCommand>

namespace spectrum {

namespace {
/// One step of the reader's edits: the findings on one image before and after.
class FindingsEdit : public QUndoCommand
{
public:
    FindingsEdit(FindingsModel *model, QString key, QList<Finding> before, QList<Finding> after, const QString &what, int moving, int gesture)
        : QUndoCommand(what), m_model(model), m_key(std::move(key)), m_before(std::move(before)), m_after(std::move(after)), m_moving(moving), m_gesture(gesture)
    {
    }
    void undo() override { m_model->restore(m_key, m_before); }
    void redo() override
    {
        if (std::exchange(m_done, false))
            return;  // pushed once done
        m_model->restore(m_key, m_after);
    }
    int id() const override { return m_moving >= 0 ? 1 : -1; }
    bool mergeWith(const QUndoCommand *other) override
    {
        const auto *o = static_cast<const FindingsEdit *>(other);
        if (o->m_key != m_key || o->m_moving != m_moving || o->m_gesture != m_gesture)
            return false;
        m_after = o->m_after;  // the drag's later moves: one step from where it began
        return true;
    }

private:
    FindingsModel *m_model;
    QString m_key;
    QList<Finding> m_before, m_after;
    int m_moving, m_gesture;
    bool m_done = true;
};
} // namespace

FindingsModel::FindingsModel(QObject *parent) : QObject(parent), m_undo(new QUndoStack(this))
{
}

void FindingsModel::record(const QString &imageKey, const QList<Finding> &before, const QString &what, int moving)
{
    if (m_restoring)
        return;
    m_undo->push(new FindingsEdit(this, imageKey, before, m_findings.value(imageKey), what, moving, m_gesture));
}

void FindingsModel::restore(const QString &imageKey, QList<Finding> findings)
{
    const QList<Finding> now = m_findings.value(imageKey);
    for (Finding &f : findings) {
        // As it was last saved (or read): not to be saved again. Otherwise as it is now, or new.
        if (const auto saved = m_saved.constFind(f.annotation.trackingUid); !f.annotation.trackingUid.isEmpty() && saved != m_saved.cend()) {
            f.changed = !(*saved == f.annotation);
            continue;
        }
        const auto same = std::find_if(now.begin(), now.end(), [&f](const Finding &g) { return g.annotation == f.annotation && g.originUid == f.originUid; });
        f.changed = same == now.end() ? true : same->changed;
    }
    const QScopedValueRollback<bool> restoring(m_restoring, true);
    if (findings.isEmpty())
        m_findings.remove(imageKey);
    else
        m_findings.insert(imageKey, findings);
    if (!m_order.contains(imageKey))
        m_order << imageKey;
    ++m_gesture;
    Q_EMIT restored(imageKey);
    Q_EMIT changed(imageKey);
}

QString FindingsModel::keyFor(const ImageRef &ref)
{
    return ref.frame > 0 ? ref.sopInstanceUid + QLatin1Char('#') + QString::number(ref.frame - 1) : ref.sopInstanceUid;
}

QList<Finding> FindingsModel::all() const
{
    QList<Finding> list;
    for (const QString &key : m_order)
        list << m_findings.value(key);
    return list;
}

int FindingsModel::count() const
{
    int n = 0;
    for (const QList<Finding> &l : m_findings)
        n += int(l.size());
    return n;
}

int FindingsModel::unsavedCount() const
{
    int n = 0;
    for (const QList<Finding> &l : m_findings)
        for (const Finding &f : l)
            n += f.changed ? 1 : 0;
    return n;
}

int FindingsModel::add(const QString &imageKey, Finding finding)
{
    if (!m_order.contains(imageKey))
        m_order << imageKey;
    const QList<Finding> before = m_findings.value(imageKey);
    QList<Finding> &list = m_findings[imageKey];
    if (!finding.fromReport())
        finding.changed = true;
    // Named from the moment it is drawn: an undo or redo across a save puts back the finding the report tracks.
    if (!finding.fromReport() && finding.annotation.trackingUid.isEmpty())
        finding.annotation.trackingUid = makeUid();
    list << finding;
    const int index = int(list.size()) - 1;
    record(imageKey, before, tr("Draw %1").arg(kindName(finding.annotation.kind)));
    Q_EMIT changed(imageKey);
    return index;
}

void FindingsModel::setAnnotation(const QString &imageKey, int index, const Annotation &annotation)
{
    auto it = m_findings.find(imageKey);
    if (it == m_findings.end() || index < 0 || index >= it->size())
        return;
    if ((*it)[index].annotation == annotation)
        return;
    const QList<Finding> before = *it;  // taken before a reference into the list: writing through one detaches
    Finding &f = (*it)[index];
    f.annotation = annotation;
    f.changed = true;
    f.reportedValues.clear();  // edited: what the report said no longer describes it
    record(imageKey, before, tr("Edit %1").arg(kindName(annotation.kind)), index);
    Q_EMIT changed(imageKey);
}

void FindingsModel::remove(const QString &imageKey, int index)
{
    auto it = m_findings.find(imageKey);
    if (it == m_findings.end() || index < 0 || index >= it->size())
        return;
    const QList<Finding> before = *it;
    it->removeAt(index);
    record(imageKey, before, tr("Delete %1").arg(kindName(before[index].annotation.kind)));
    Q_EMIT changed(imageKey);
}

void FindingsModel::clear(const QString &imageKey)
{
    const QList<Finding> before = m_findings.value(imageKey);
    if (m_findings.remove(imageKey) > 0) {
        record(imageKey, before, tr("Clear the findings on an image"));
        Q_EMIT changed(imageKey);
    }
}

int FindingsModel::addFromReport(const QString &reportUid, const QList<Finding> &findings)
{
    m_undo->clear();  // the steps recorded whole lists of findings: one put back now would drop or revive a report's
    if (m_withdrawn.contains(reportUid))
        return 0;
    for (auto it = m_findings.begin(); it != m_findings.end(); ++it)
        it->erase(std::remove_if(it->begin(), it->end(), [&](const Finding &f) { return f.originUid == reportUid && !f.changed; }), it->end());
    // One finding per tracking UID: one drawn here (or read from an earlier report) and saved again is not doubled.
    QSet<QString> present;
    for (const QList<Finding> &l : std::as_const(m_findings))
        for (const Finding &f : l)
            if (!f.annotation.trackingUid.isEmpty())
                present.insert(f.annotation.trackingUid);
    int added = 0;
    for (const Finding &f : findings) {
        if (!f.annotation.trackingUid.isEmpty() && present.contains(f.annotation.trackingUid))
            continue;
        ++added;
        const QString key = keyFor(f.image);
        if (!m_order.contains(key))
            m_order << key;
        m_findings[key] << f;
        if (!f.annotation.trackingUid.isEmpty())
            m_saved.insert(f.annotation.trackingUid, f.annotation);
    }
    Q_EMIT changed(QString());
    return added;
}

void FindingsModel::markSaved(const QList<QString> &trackingUids)
{
    for (QList<Finding> &l : m_findings)
        for (Finding &f : l)
            if (trackingUids.contains(f.annotation.trackingUid)) {
                f.changed = false;
                m_saved.insert(f.annotation.trackingUid, f.annotation);
            }
    Q_EMIT changed(QString());
}

void FindingsModel::setMeasured(const QString &imageKey, int index, const QList<MeasuredValue> &values)
{
    auto it = m_findings.find(imageKey);
    if (it == m_findings.end() || index < 0 || index >= it->size() || (*it)[index].measuredValues == values)
        return;
    (*it)[index].measuredValues = values;
    Q_EMIT measured();
}

namespace {

/// Whether the selection's reference `r` names the image (and frame) `ref` shows: a reference without a frame names
/// every frame.
bool names(const ImageRef &r, const ImageRef &ref)
{
    return r.sopInstanceUid == ref.sopInstanceUid && (r.frame == 0 || r.frame == ref.frame);
}

bool isOfInterest(const KeySelection &k)
{
    return k.document.titleCode == QLatin1String("113000") || k.document.titleCode.isEmpty();
}

} // namespace

bool FindingsModel::isEditable(const KeySelection &k) const
{
    return isOfInterest(k) && k.document.observerName == m_readerName;
}

void FindingsModel::setKeyImage(const ImageRef &ref, bool key)
{
    const auto marked = std::find_if(m_marked.begin(), m_marked.end(), [&](const ImageRef &r) { return r.sameImage(ref); });
    if (key) {
        // Marked again after being unmarked: the selection keeps it, as it was.
        const auto before = m_unmarked.size();
        m_unmarked.erase(std::remove_if(m_unmarked.begin(), m_unmarked.end(), [&](const ImageRef &r) { return names(r, ref); }), m_unmarked.end());
        if (m_unmarked.size() == before && marked == m_marked.end() && !isKeyImage(ref))
            m_marked << ref;
    } else if (marked != m_marked.end()) {
        m_marked.erase(marked);
    } else {
        for (const KeySelection &k : std::as_const(m_keySelections))
            if (isEditable(k))
                for (const ImageRef &r : k.document.images)
                    if (names(r, ref) && !std::any_of(m_unmarked.begin(), m_unmarked.end(), [&](const ImageRef &u) { return u.sameImage(r); }))
                        m_unmarked << r;
    }
    m_keyChanged = true;
    Q_EMIT keyImagesUpdated();
}

bool FindingsModel::isKeyImage(const ImageRef &ref) const
{
    if (m_rejected.contains(ref.sopInstanceUid))
        return false;
    if (std::any_of(m_marked.begin(), m_marked.end(), [&](const ImageRef &r) { return names(r, ref); }))
        return true;
    for (const KeySelection &k : m_keySelections)
        for (const ImageRef &r : k.document.images)
            if (names(r, ref) && !std::any_of(m_unmarked.begin(), m_unmarked.end(), [&](const ImageRef &u) { return u.sameImage(r); }))
                return true;
    return false;
}

bool FindingsModel::canUnmarkKeyImage(const ImageRef &ref) const
{
    if (isMarkedKeyImage(ref))
        return true;
    for (const KeySelection &k : m_keySelections)
        if (isEditable(k) && std::any_of(k.document.images.begin(), k.document.images.end(), [&](const ImageRef &r) { return names(r, ref); }))
            return true;
    return false;
}

QList<KeySelection> FindingsModel::replacedKeySelections() const
{
    QList<KeySelection> replaced;
    for (const KeySelection &k : m_keySelections)
        if (isEditable(k)
            && std::any_of(k.document.images.begin(), k.document.images.end(), [&](const ImageRef &r) {
                   return std::any_of(m_unmarked.begin(), m_unmarked.end(), [&](const ImageRef &u) { return u.sameImage(r); });
               }))
            replaced << k;
    return replaced;
}

QList<ImageRef> FindingsModel::keyImagesToSave() const
{
    QList<ImageRef> images;
    auto add = [&](const ImageRef &r) {
        if (!m_rejected.contains(r.sopInstanceUid) && !std::any_of(images.begin(), images.end(), [&](const ImageRef &i) { return i.sameImage(r); })
            && !std::any_of(m_unmarked.begin(), m_unmarked.end(), [&](const ImageRef &u) { return u.sameImage(r); }))
            images << r;
    };
    for (const KeySelection &k : replacedKeySelections())
        for (const ImageRef &r : k.document.images)
            add(r);
    for (const ImageRef &r : m_marked)
        add(r);
    return images;
}

QString FindingsModel::keyNoteToSave() const
{
    if (!m_keyNote.isEmpty())
        return m_keyNote;
    for (const KeySelection &k : replacedKeySelections())
        if (!k.document.description.isEmpty())
            return k.document.description;
    return QString();
}

void FindingsModel::keyImagesSaved(const QList<KeySelection> &written, const QStringList &withdrawnUids, const QString &why,
                                   const QList<ImageRef> &marks, const QList<ImageRef> &unmarks)
{
    auto without = [](QList<ImageRef> &list, const QList<ImageRef> &done) {
        list.erase(std::remove_if(list.begin(), list.end(),
                                  [&](const ImageRef &r) { return std::any_of(done.begin(), done.end(), [&](const ImageRef &d) { return d.sameImage(r); }); }),
                   list.end());
    };
    without(m_marked, marks);
    without(m_unmarked, unmarks);
    m_keyChanged = !m_marked.isEmpty() || !m_unmarked.isEmpty();
    for (const KeySelection &k : written)
        addKeySelection(k);
    withdraw(withdrawnUids, why);
    Q_EMIT keyImagesUpdated();
}

void FindingsModel::withdraw(const QStringList &uids, const QString &why)
{
    m_undo->clear();  // a withdrawn report's findings must not come back with an undo
    for (const QString &uid : uids) {
        m_withdrawn.insert(uid, why);
        m_keySelections.erase(std::remove_if(m_keySelections.begin(), m_keySelections.end(), [&](const KeySelection &k) { return k.uid == uid; }),
                              m_keySelections.end());
        m_presentations.erase(std::remove_if(m_presentations.begin(), m_presentations.end(), [&](const PresentationEntry &p) { return p.uid == uid; }),
                              m_presentations.end());
        for (auto it = m_findings.begin(); it != m_findings.end(); ++it)
            it->erase(std::remove_if(it->begin(), it->end(), [&](const Finding &f) { return f.originUid == uid && !f.changed; }), it->end());
    }
    if (uids.isEmpty())
        return;
    Q_EMIT changed(QString());
    Q_EMIT keyImagesUpdated();
    Q_EMIT presentationStatesChanged();
}

void FindingsModel::rejectImages(const QList<ImageRef> &images, const QString &why)
{
    for (const ImageRef &r : images)
        m_rejected.insert(r.sopInstanceUid, why);
    if (!images.isEmpty())
        Q_EMIT keyImagesUpdated();
}

QString FindingsModel::rejectionOf(const ImageRef &ref) const
{
    return m_rejected.value(ref.sopInstanceUid);
}

void FindingsModel::setKeyNote(const QString &note)
{
    if (note == m_keyNote)
        return;
    m_keyNote = note;
    if (!m_marked.isEmpty())
        m_keyChanged = true;
}

void FindingsModel::addKeySelection(const KeySelection &selection)
{
    if (m_withdrawn.contains(selection.uid))
        return;
    const auto it = std::find_if(m_keySelections.begin(), m_keySelections.end(), [&](const KeySelection &k) { return k.uid == selection.uid; });
    if (it != m_keySelections.end())
        *it = selection;
    else
        m_keySelections << selection;
    Q_EMIT keyImagesUpdated();
}

void FindingsModel::addPresentationState(const PresentationEntry &entry)
{
    if (m_withdrawn.contains(entry.uid))
        return;
    const auto it = std::find_if(m_presentations.begin(), m_presentations.end(), [&](const PresentationEntry &p) { return p.uid == entry.uid; });
    if (it != m_presentations.end())
        *it = entry;
    else
        m_presentations << entry;
    Q_EMIT presentationStatesChanged();
}

const PresentationEntry *FindingsModel::presentationState(const QString &uid) const
{
    for (const PresentationEntry &p : m_presentations)
        if (p.uid == uid)
            return &p;
    return nullptr;
}

void FindingsModel::assignTrackingUids()
{
    for (QList<Finding> &l : m_findings)
        for (Finding &f : l)
            if (f.annotation.trackingUid.isEmpty())
                f.annotation.trackingUid = makeUid();
}

} // namespace spectrum

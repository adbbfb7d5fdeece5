// SPDX-License-Identifier: Apache-2.0
#include "viewer/studyviewer.h"

// The study viewer's findings: the key image series (a selection's images as a series of their own), going to an
// image a finding lies on, and applying a presentation state of the study to the active pane.

#include "viewer/seriespane.h"

#include <QSet>

#include <memory>

namespace spectrum {

void StudyViewer::applyKeySeries()
{
    m_study.series.erase(std::remove_if(m_study.series.begin(), m_study.series.end(), [](const SeriesSummary &s) { return isKeyImageSeries(s); }),
                         m_study.series.end());
    // Images a rejection note of the study rejects (IHE IOCM: for quality, for patient safety, a wrong worklist
    // entry — another patient's, maybe): left out of the study as shown; the findings panel lists them.
    const QHash<QString, QString> &rejected = m_findings->rejectedImages();
    if (!rejected.isEmpty())
        for (SeriesSummary &s : m_study.series)
            s.instances.erase(std::remove_if(s.instances.begin(), s.instances.end(), [&](const InstanceRef &i) { return rejected.contains(i.sopInstanceUid); }),
                              s.instances.end());
    const int real = int(m_study.series.size());
    for (const KeySelection &k : m_findings->keySelections()) {
        SeriesSummary key;
        key.seriesInstanceUid = QStringLiteral("key:") + k.uid;
        key.description = k.document.description.isEmpty() ? tr("Key images: %1").arg(k.document.title)
                                                            : tr("Key images: %1 — %2").arg(k.document.title, k.document.description);
        key.seriesNumber = 0;
        // The study's own images, in the selection's order (a multi-frame image once, whichever frames it names).
        QSet<QString> added;
        for (const ImageRef &r : k.document.images) {
            if (added.contains(r.sopInstanceUid))
                continue;
            for (int s = 0; s < real; ++s) {
                for (const InstanceRef &i : m_study.series[s].instances) {
                    if (i.sopInstanceUid != r.sopInstanceUid)
                        continue;
                    key.instances << i;
                    key.modality = m_study.series[s].modality;
                    added.insert(r.sopInstanceUid);
                }
            }
        }
        if (!key.instances.isEmpty())
            m_study.series << key;
    }
}

bool StudyViewer::showInstance(const QString &sopInstanceUid, int frame)
{
    for (int s = 0; s < m_study.series.size(); ++s) {
        const QList<InstanceRef> &in = m_study.series[s].instances;
        for (int i = 0; i < in.size(); ++i) {
            if (in[i].sopInstanceUid != sopInstanceUid)
                continue;
            if (m_active->study() != &m_study || m_active->seriesIndex() != s)
                showSeries(s);
            showSlice(i);
            if (frame > 0) {
                // Once the image is on screen, at its frame.
                auto once = std::make_shared<QMetaObject::Connection>();
                SeriesPane *pane = m_active;
                *once = connect(pane, &SeriesPane::imageShown, this, [pane, once, sopInstanceUid, frame] {
                    if (pane->viewport()->image().info.identity.sopInstanceUid != sopInstanceUid)
                        return;
                    QObject::disconnect(*once);
                    pane->viewport()->setFrame(frame - 1);
                });
                if (viewport()->hasImage() && viewport()->image().info.identity.sopInstanceUid == sopInstanceUid) {
                    QObject::disconnect(*once);
                    viewport()->setFrame(frame - 1);
                }
            }
            return true;
        }
    }
    return false;
}

bool StudyViewer::applyPresentationState(const QString &uid)
{
    const PresentationEntry *entry = m_findings->presentationState(uid);
    if (!entry || entry->state.images.isEmpty())
        return false;
    const PresentationState state = entry->state;
    const QString origin = entry->origin;
    // Its graphics, as findings from it (applied again: replaced, not doubled).
    QList<Finding> findings;
    for (const ImageRef &image : state.images) {
        for (const Annotation &a : state.annotations.value(presentationKey(image.sopInstanceUid, image.frame))) {
            Finding f;
            f.annotation = a;
            f.image = image;
            f.origin = origin;
            f.originUid = uid;
            findings << f;
        }
    }
    m_findings->addFromReport(uid, findings);
    // In use in the active pane from now on (each image as the state shows it); shown on an image it applies to:
    // the one in view when it is one, else its first.
    auto shared = std::make_shared<const PresentationState>(state);
    const QString name = state.label.isEmpty() ? origin : state.label;
    if (viewport()->hasImage() && state.appliesTo(viewport()->image().info.identity.sopInstanceUid, viewport()->frameCount() > 1 ? viewport()->frame() + 1 : 0)) {
        viewport()->setPresentationState(shared, name);
        return true;
    }
    SeriesPane *pane = m_active;
    auto once = std::make_shared<QMetaObject::Connection>();
    *once = connect(pane, &SeriesPane::imageShown, this, [pane, once, shared, name] {
        ImageViewport *v = pane->viewport();
        if (!v->hasImage() || !shared->appliesTo(v->image().info.identity.sopInstanceUid))
            return;
        QObject::disconnect(*once);
        v->setPresentationState(shared, name);
    });
    if (!showInstance(state.images.first().sopInstanceUid)) {
        QObject::disconnect(*once);
        return false;
    }
    if (viewport()->hasImage() && shared->appliesTo(viewport()->image().info.identity.sopInstanceUid)) {
        QObject::disconnect(*once);
        viewport()->setPresentationState(shared, name);
    }
    return true;
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "findings/findingspanel.h"

#include "findings/findingsmodel.h"
#include "viewer/studyviewer.h"
#include "spectrum/imaging/tools/measurementtool.h"

#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace spectrum {

namespace {

enum Role { SopRole = Qt::UserRole + 1, FrameRole, PresentationRole };

/// "Series 2, image 14 (frame 3)": where an image lies in the studies the viewer knows; its UID when unknown.
QString placeOf(const StudyViewer *viewer, const ImageRef &ref)
{
    QList<const StudySummary *> studies{&viewer->study()};
    for (int i = 0; i < viewer->comparison()->count(); ++i)
        studies << &viewer->comparison()->study(i);
    for (const StudySummary *study : studies) {
        for (const SeriesSummary &s : study->series) {
            for (int i = 0; i < s.instances.size(); ++i) {
                if (s.instances[i].sopInstanceUid != ref.sopInstanceUid)
                    continue;
                QString place = QObject::tr("Series %1, image %2").arg(s.seriesNumber).arg(s.instances[i].instanceNumber > 0 ? s.instances[i].instanceNumber : i + 1);
                if (ref.frame > 0)
                    place += QObject::tr(" (frame %1)").arg(ref.frame);
                if (study != &viewer->study())
                    place += QObject::tr(", prior %1").arg(DicomIdentity::displayDate(study->identity.studyDate));
                return place;
            }
        }
    }
    return QObject::tr("image %1 (not in this study's list)").arg(ref.sopInstanceUid);
}

} // namespace

FindingsPanel::FindingsPanel(QWidget *parent)
    : QWidget(parent), m_header(new QLabel), m_tree(new QTreeWidget), m_keyNote(new QLineEdit), m_reader(new QLineEdit)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_header->setWordWrap(true);
    layout->addWidget(m_header);
    // One column, a finding in two lines (what and its values; where and its state): readable in a narrow dock.
    m_tree->setColumnCount(1);
    m_tree->setHeaderHidden(true);
    m_tree->setWordWrap(true);
    m_tree->setUniformRowHeights(false);
    m_tree->setObjectName(QStringLiteral("findingsTree"));
    m_tree->setToolTip(tr("Double-click a finding to go to its image. File > Save findings (Ctrl+S) saves those drawn here."));
    layout->addWidget(m_tree);
    // Who the reports name as their observer, kept in the settings.
    m_reader->setPlaceholderText(tr("Your name (Family^Given), saved with your findings"));
    m_reader->setObjectName(QStringLiteral("readerName"));
    m_reader->setText(QSettings().value(QStringLiteral("findings/observerName")).toString());
    connect(m_reader, &QLineEdit::editingFinished, this, [this] {
        QSettings().setValue(QStringLiteral("findings/observerName"), m_reader->text().trimmed().left(64));
    });
    layout->addWidget(m_reader);
    m_keyNote->setPlaceholderText(tr("Note for the key images (saved with them)"));
    m_keyNote->setObjectName(QStringLiteral("keyNote"));
    layout->addWidget(m_keyNote);
    connect(m_keyNote, &QLineEdit::textEdited, this, [this](const QString &note) {
        if (m_viewer)
            m_viewer->findings()->setKeyNote(note.left(1024));
    });
    connect(m_tree, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem *item) {
        const QString state = item->data(0, PresentationRole).toString();
        if (!state.isEmpty())
            return Q_EMIT applyRequested(state);
        const QString sop = item->data(0, SopRole).toString();
        if (!sop.isEmpty())
            Q_EMIT goToRequested(sop, item->data(0, FrameRole).toInt());
    });
    rebuild();
}

void FindingsPanel::setViewer(StudyViewer *viewer)
{
    if (m_viewer == viewer)
        return;
    if (m_viewer) {
        disconnect(m_viewer->findings(), nullptr, this, nullptr);
        disconnect(m_viewer->findingsLoader(), nullptr, this, nullptr);
    }
    m_viewer = viewer;
    m_keyNote->setText(m_viewer ? m_viewer->findings()->keyNote() : QString());
    m_keyNote->setEnabled(m_viewer != nullptr);
    if (m_viewer) {
        connect(m_viewer->findings(), &FindingsModel::changed, this, &FindingsPanel::rebuild);
        connect(m_viewer->findings(), &FindingsModel::measured, this, &FindingsPanel::rebuild);
        connect(m_viewer->findings(), &FindingsModel::keyImagesUpdated, this, &FindingsPanel::rebuild);
        connect(m_viewer->findings(), &FindingsModel::presentationStatesChanged, this, &FindingsPanel::rebuild);
        connect(m_viewer->findingsLoader(), &FindingsLoader::reportRead, this, &FindingsPanel::rebuild);
        connect(m_viewer->findingsLoader(), &FindingsLoader::reportFailed, this, &FindingsPanel::rebuild);
    }
    rebuild();
}

void FindingsPanel::rebuild()
{
    m_tree->clear();
    if (!m_viewer) {
        m_header->setText(tr("Open a study to see its findings."));
        return;
    }
    const QList<Finding> all = m_viewer->findings()->all();
    QTreeWidgetItem *drawnHere = nullptr;
    QHash<QString, QTreeWidgetItem *> byReport;
    for (const Finding &f : all) {
        QTreeWidgetItem *parent = nullptr;
        if (!f.fromReport() || f.changed) {
            if (!drawnHere) {
                drawnHere = new QTreeWidgetItem(m_tree, {tr("Drawn here")});
                drawnHere->setExpanded(true);
            }
            parent = drawnHere;
        } else {
            QTreeWidgetItem *&r = byReport[f.originUid];
            if (!r) {
                r = new QTreeWidgetItem(m_tree, {f.origin});
                r->setExpanded(true);
            }
            parent = r;
        }
        const QString what = f.annotation.text.isEmpty() ? kindName(f.annotation.kind) : QStringLiteral("%1: %2").arg(kindName(f.annotation.kind), f.annotation.text);
        // As measured on its image where it was shown; a report's own values until then.
        QString values = describeValues(!f.measuredValues.isEmpty() ? f.measuredValues : f.reportedValues).replace(QLatin1Char('\n'), QStringLiteral("; "));
        if (!f.otherValues.isEmpty())
            values += (values.isEmpty() ? QString() : QStringLiteral("; ")) + f.otherValues.join(QStringLiteral("; "));
        const bool measures = measurementTool(f.annotation.kind).words() == Words::None;
        if (values.isEmpty() && !f.fromReport() && measures)
            values = tr("(measured when shown)");
        const QString from = f.fromReport() ? (f.changed ? tr("edited, not saved") : tr("report")) : (f.changed ? tr("not saved") : tr("saved"));
        auto *item = new QTreeWidgetItem(parent, {QStringLiteral("%1%2\n%3 · %4").arg(what, values.isEmpty() ? QString() : QStringLiteral(" — ") + values,
                                                                                          placeOf(m_viewer, f.image), from)});
        item->setData(0, SopRole, f.image.sopInstanceUid);
        item->setData(0, FrameRole, f.image.frame);
        item->setToolTip(0, f.label.isEmpty() ? what : f.label);
    }
    // Key images: those marked here, then each selection of the study.
    const QList<ImageRef> marked = m_viewer->findings()->markedKeyImages();
    if (!marked.isEmpty()) {
        auto *top = new QTreeWidgetItem(m_tree, {tr("★ Key images marked here (%1)").arg(m_viewer->findings()->keyImagesChanged() ? tr("not saved") : tr("saved"))});
        top->setExpanded(true);
        for (const ImageRef &r : marked) {
            auto *item = new QTreeWidgetItem(top, {placeOf(m_viewer, r)});
            item->setData(0, SopRole, r.sopInstanceUid);
            item->setData(0, FrameRole, r.frame);
        }
    }
    for (const KeySelection &k : m_viewer->findings()->keySelections()) {
        const QString title = k.document.description.isEmpty() ? k.document.title : QStringLiteral("%1 — %2").arg(k.document.title, k.document.description);
        auto *top = new QTreeWidgetItem(m_tree, {QStringLiteral("★ %1: %2").arg(k.origin, title)});
        top->setExpanded(true);
        for (const ImageRef &r : k.document.images) {
            auto *item = new QTreeWidgetItem(top, {placeOf(m_viewer, r)});
            item->setData(0, SopRole, r.sopInstanceUid);
            item->setData(0, FrameRole, r.frame);
        }
    }
    // Presentation states, by the series they apply to: applied on request (double-click).
    const QList<PresentationEntry> &states = m_viewer->findings()->presentationStates();
    if (!states.isEmpty()) {
        auto *top = new QTreeWidgetItem(m_tree, {tr("Presentation states (double-click to apply)")});
        top->setExpanded(true);
        for (const PresentationEntry &p : states) {
            const PresentationState &st = p.state;
            QStringList what;
            if (st.view.window)
                what << tr("W %1 L %2").arg(st.view.window->second, 0, 'f', 0).arg(st.view.window->first, 0, 'f', 0);
            if (st.view.rotation || st.view.flipHorizontally)
                what << tr("turned %1°%2").arg(st.view.rotation).arg(st.view.flipHorizontally ? tr(", flipped") : QString());
            if (st.view.inverse)
                what << tr("inverted");
            int graphics = 0;
            for (const QList<Annotation> &l : st.annotations)
                graphics += int(l.size());
            if (graphics > 0)
                what << tr("%n graphic(s)", nullptr, graphics);
            const QString series = st.images.isEmpty() ? tr("no image") : placeOf(m_viewer, st.images.first()).section(QLatin1Char(','), 0, 0);
            auto *item = new QTreeWidgetItem(top, {QStringLiteral("%1: %2\n%3 (%4 image(s)) · %5")
                                                       .arg(p.origin, st.description.isEmpty() ? st.label : st.description, series)
                                                       .arg(st.images.size())
                                                       .arg(what.join(QStringLiteral(", ")))});
            item->setData(0, PresentationRole, p.uid);
        }
    }
    const QStringList notShown = m_viewer->findingsLoader()->notShown();
    if (!notShown.isEmpty()) {
        auto *top = new QTreeWidgetItem(m_tree, {tr("Not drawn (%n)", nullptr, int(notShown.size()))});
        top->setExpanded(true);
        for (const QString &line : notShown)
            new QTreeWidgetItem(top, {line});
    }
    const int unsaved = m_viewer->findings()->unsavedCount();
    m_header->setText(all.isEmpty() ? tr("No findings on this study yet: draw with the Tools menu; reports in the study are read as they arrive.")
                                    : tr("%n finding(s)", nullptr, int(all.size()))
                                          + (unsaved > 0 ? tr(", %n not saved (File > Save findings, Ctrl+S)", nullptr, unsaved) : QString()));
}

QStringList FindingsPanel::lines() const
{
    QStringList out;
    for (int t = 0; t < m_tree->topLevelItemCount(); ++t) {
        const QTreeWidgetItem *top = m_tree->topLevelItem(t);
        out << top->text(0);
        for (int c = 0; c < top->childCount(); ++c)
            out << QStringLiteral("  ") + top->child(c)->text(0).replace(QLatin1Char('\n'), QStringLiteral(" | "));
    }
    return out;
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/documents/presentationstate.h"

#include "dcmtksupport.h"
#include "documents/presentationlayers.h"
#include "spectrum/imaging/tools/measurementtool.h"
#include "spectrum/core/uid.h"

#include <QDateTime>
#include <QLineF>

#include <cmath>

namespace spectrum {

namespace {

OFString ascii(const QString &s)
{
    return OFString(s.toLatin1().constData());
}

QString number(double v)
{
    QString s = QString::number(v, 'g', 10);
    return s.size() <= 16 ? s : QString::number(v, 'g', 6);
}

DcmItem *appendItem(DcmItem *parent, const DcmTagKey &sequence)
{
    DcmItem *item = nullptr;
    parent->findOrCreateSequenceItem(sequence, item, -2);
    return item;
}

void putFloats(DcmItem *item, const DcmTagKey &tag, const QList<QPointF> &points)
{
    QStringList values;
    for (const QPointF &p : points)
        values << QString::number(p.x(), 'g', 9) << QString::number(p.y(), 'g', 9);
    item->putAndInsertString(tag, ascii(values.join(QLatin1Char('\\'))).c_str());
}

void addReferencedImage(DcmItem *sequenceOwner, const DcmTagKey &sequence, const ImageRef &r)
{
    DcmItem *ref = appendItem(sequenceOwner, sequence);
    ref->putAndInsertString(DCM_ReferencedSOPClassUID, ascii(r.sopClassUid).c_str());
    ref->putAndInsertString(DCM_ReferencedSOPInstanceUID, ascii(r.sopInstanceUid).c_str());
    if (r.frame > 0)
        ref->putAndInsertString(DCM_ReferencedFrameNumber, QByteArray::number(r.frame).constData());
}

void addGraphic(DcmItem *annotation, const char *type, const QList<QPointF> &points)
{
    DcmItem *g = appendItem(annotation, DCM_GraphicObjectSequence);
    g->putAndInsertString(DCM_GraphicAnnotationUnits, "PIXEL");
    g->putAndInsertString(DCM_GraphicDimensions, "2");
    g->putAndInsertString(DCM_NumberOfGraphicPoints, QByteArray::number(points.size()).constData());
    putFloats(g, DCM_GraphicData, points);
    g->putAndInsertString(DCM_GraphicType, type);
    g->putAndInsertString(DCM_GraphicFilled, "N");
}

void addText(DcmItem *annotation, const QString &text, QPointF anchor, bool anchorVisible, bool utf8)
{
    DcmItem *t = appendItem(annotation, DCM_TextObjectSequence);
    t->putAndInsertString(DCM_AnchorPointAnnotationUnits, "PIXEL");
    t->putAndInsertString(DCM_UnformattedTextValue, utf8 ? text.toUtf8().constData() : text.toLatin1().constData());
    putFloats(t, DCM_AnchorPoint, {anchor});
    t->putAndInsertString(DCM_AnchorPointVisibility, anchorVisible ? "Y" : "N");
}

/// An annotation as GSPS graphics, as its tool says (lines are POLYLINEs, regions closed ones, an ellipse an
/// ELLIPSE), and its words as text objects at their anchors.
void addAnnotation(DcmItem *findings, const Annotation &a, bool utf8)
{
    for (const ToolShape &s : measurementTool(a.kind).presentationShapes(a)) {
        switch (s.type) {
        case ToolShape::Type::Point: addGraphic(findings, "POINT", s.points); break;
        case ToolShape::Type::Ellipse: addGraphic(findings, "ELLIPSE", s.points); break;
        case ToolShape::Type::Polyline:
        case ToolShape::Type::Arrow: addGraphic(findings, "POLYLINE", s.points); break;
        case ToolShape::Type::Anchor: addText(findings, a.text, s.points.value(0), false, utf8); break;
        }
    }
}

bool fitsLatin1(const QString &s)
{
    return std::all_of(s.begin(), s.end(), [](QChar c) { return c.unicode() <= 0xFF; });
}

} // namespace

QString presentationKey(const QString &sopInstanceUid, int frame)
{
    return frame > 0 ? sopInstanceUid + QLatin1Char('#') + QString::number(frame) : sopInstanceUid;
}

Result<QByteArray> writePresentationState(const PresentationStateRequest &request)
{
    dcmtk::registerCodecs();
    const DicomIdentity &study = request.study;
    if (!isValidUid(study.studyInstanceUid))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the presentation state names no study"));
    if (request.images.isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("a presentation state applies to at least one image"));
    for (const ImageRef &r : request.images)
        if (r.studyInstanceUid != study.studyInstanceUid || r.seriesInstanceUid.isEmpty() || r.sopClassUid.isEmpty())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("an image of another study, or without its series or SOP class"));
    if (request.columns < 1 || request.rows < 1)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the images' size is not given"));
    if (request.view.rotation % 90 != 0)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("a rotation of %1°: only quarter turns").arg(request.view.rotation));
    QStringList texts{study.patientName, study.patientId, study.studyDescription, request.description, request.creatorName};
    for (auto it = request.annotations.constBegin(); it != request.annotations.constEnd(); ++it)
        for (const Annotation &a : it.value())
            texts << a.text;
    for (auto it = request.labels.constBegin(); it != request.labels.constEnd(); ++it)
        texts << it.value();
    const bool utf8 = !std::all_of(texts.begin(), texts.end(), fitsLatin1);
    auto encode = [utf8](const QString &s) { return utf8 ? QByteArray(s.toUtf8()) : s.toLatin1(); };

    DcmFileFormat file;
    DcmDataset *ds = file.getDataset();
    const QDateTime now = QDateTime::currentDateTime();
    auto put = [ds](const DcmTagKey &tag, const QByteArray &value) { ds->putAndInsertString(tag, value.constData()); };
    // SOP Common, Patient, General Study, General Series / Presentation Series, General Equipment.
    put(DCM_SpecificCharacterSet, utf8 ? "ISO_IR 192" : "ISO_IR 100");
    put(DCM_SOPClassUID, UID_GrayscaleSoftcopyPresentationStateStorage);
    put(DCM_SOPInstanceUID, makeUid().toLatin1());
    put(DCM_PatientName, encode(study.patientName));
    put(DCM_PatientID, encode(study.patientId));
    if (!study.issuerOfPatientId.isEmpty())
        put(DCM_IssuerOfPatientID, encode(study.issuerOfPatientId));
    put(DCM_PatientBirthDate, study.patientBirthDate.toLatin1());
    put(DCM_PatientSex, study.patientSex.toLatin1());
    put(DCM_StudyInstanceUID, study.studyInstanceUid.toLatin1());
    put(DCM_StudyDate, study.studyDate.toLatin1());
    put(DCM_StudyTime, study.studyTime.toLatin1());
    put(DCM_ReferringPhysicianName, "");
    put(DCM_StudyID, "");
    put(DCM_AccessionNumber, encode(study.accessionNumber));
    if (!study.studyDescription.isEmpty())
        put(DCM_StudyDescription, encode(study.studyDescription.left(64)));
    put(DCM_Modality, "PR");
    put(DCM_SeriesInstanceUID, (request.seriesInstanceUid.isEmpty() ? makeUid() : request.seriesInstanceUid).toLatin1());
    put(DCM_SeriesNumber, QByteArray::number(request.seriesNumber > 0 ? request.seriesNumber : 9003));
    put(DCM_SeriesDescription, "Spectrum presentation state");
    put(DCM_Manufacturer, "Spectrum");
    // Presentation State Identification.
    put(DCM_InstanceNumber, "1");
    put(DCM_ContentLabel, (request.contentLabel.isEmpty() ? QStringLiteral("SPECTRUM_VIEW") : request.contentLabel.toUpper().left(16)).toLatin1());
    put(DCM_ContentDescription, encode(request.description.left(64)));
    put(DCM_PresentationCreationDate, now.toString(QStringLiteral("yyyyMMdd")).toLatin1());
    put(DCM_PresentationCreationTime, now.toString(QStringLiteral("HHmmss")).toLatin1());
    put(DCM_ContentCreatorName, encode(request.creatorName));
    // Presentation State Relationship: the images, by series.
    QStringList seriesOrder;
    for (const ImageRef &r : request.images)
        if (!seriesOrder.contains(r.seriesInstanceUid))
            seriesOrder << r.seriesInstanceUid;
    for (const QString &series : seriesOrder) {
        DcmItem *s = appendItem(ds, DCM_ReferencedSeriesSequence);
        s->putAndInsertString(DCM_SeriesInstanceUID, ascii(series).c_str());
        for (const ImageRef &r : request.images)
            if (r.seriesInstanceUid == series)
                addReferencedImage(s, DCM_ReferencedImageSequence, r);
    }
    // Modality LUT: the images' rescale, which the window is in.
    put(DCM_RescaleIntercept, number(request.rescaleIntercept).toLatin1());
    put(DCM_RescaleSlope, number(request.rescaleSlope).toLatin1());
    put(DCM_RescaleType, request.rescaleType.isEmpty() ? QByteArray("US") : request.rescaleType.toLatin1());
    // Softcopy VOI LUT: for every image referenced.
    if (request.view.window) {
        DcmItem *voi = appendItem(ds, DCM_SoftcopyVOILUTSequence);
        voi->putAndInsertString(DCM_WindowCenter, number(request.view.window->first).toLatin1().constData());
        voi->putAndInsertString(DCM_WindowWidth, number(std::max(1e-6, request.view.window->second)).toLatin1().constData());
    }
    // Displayed Area: the part shown, scaled to fit (our zoom and pan); the whole image when none was given.
    {
        DcmItem *area = appendItem(ds, DCM_DisplayedAreaSelectionSequence);
        QRectF r = request.view.displayedArea.value_or(QRectF());
        if (r.isEmpty())
            r = QRectF(0, 0, 0, 0);
        // 1-based pixel numbers: the first pixel whose area the region reaches, and the last.
        const int left = int(std::floor(r.left())) + 1, top = int(std::floor(r.top())) + 1;
        const int right = std::max(left, int(std::ceil(r.right()))), bottom = std::max(top, int(std::ceil(r.bottom())));
        if (request.view.displayedArea && !r.isEmpty()) {
            area->putAndInsertString(DCM_DisplayedAreaTopLeftHandCorner, QStringLiteral("%1\\%2").arg(left).arg(top).toLatin1().constData());
            area->putAndInsertString(DCM_DisplayedAreaBottomRightHandCorner, QStringLiteral("%1\\%2").arg(right).arg(bottom).toLatin1().constData());
        } else {
            area->putAndInsertString(DCM_DisplayedAreaTopLeftHandCorner, "1\\1");
            area->putAndInsertString(DCM_DisplayedAreaBottomRightHandCorner, QStringLiteral("%1\\%2").arg(request.columns).arg(request.rows).toLatin1().constData());
        }
        area->putAndInsertString(DCM_PresentationSizeMode, "SCALE TO FIT");
        area->putAndInsertString(DCM_PresentationPixelAspectRatio, "1\\1");
    }
    // Graphic Annotation, in the layers of the findings and of their values.
    bool anyValues = false;
    // Per image (and frame) drawn on, in the order of the images.
    QList<std::pair<ImageRef, QString>> drawnOn;
    for (const ImageRef &image : request.images) {
        QStringList keys = request.annotations.keys();
        std::sort(keys.begin(), keys.end());  // frames of one image in a stable order
        for (const QString &key : keys) {
            const auto it = request.annotations.constFind(key);
            const QString sop = it.key().section(QLatin1Char('#'), 0, 0);
            if (sop != image.sopInstanceUid || it.value().isEmpty())
                continue;
            ImageRef r = image;
            r.frame = it.key().contains(QLatin1Char('#')) ? it.key().section(QLatin1Char('#'), 1).toInt() : 0;
            drawnOn.append({r, it.key()});
        }
    }
    for (const auto &[r, key] : drawnOn) {
        const QList<Annotation> list = request.annotations.value(key);
        DcmItem *findings = appendItem(ds, DCM_GraphicAnnotationSequence);
        addReferencedImage(findings, DCM_ReferencedImageSequence, r);
        findings->putAndInsertString(DCM_GraphicLayer, kFindingsLayer);
        for (const Annotation &a : list)
            if (isWellFormed(a))
                addAnnotation(findings, a, utf8);
        const QStringList labels = request.labels.value(key);
        bool first = true;
        for (int i = 0; i < list.size() && i < labels.size(); ++i) {
            if (labels[i].isEmpty() || measurementTool(list[i].kind).words() != Words::None || !isWellFormed(list[i]))
                continue;
            DcmItem *values = nullptr;
            if (first) {
                values = appendItem(ds, DCM_GraphicAnnotationSequence);
                addReferencedImage(values, DCM_ReferencedImageSequence, r);
                values->putAndInsertString(DCM_GraphicLayer, kValuesLayer);
                first = false;
            } else {
                DcmSequenceOfItems *seq = nullptr;
                ds->findAndGetSequence(DCM_GraphicAnnotationSequence, seq);
                values = seq->getItem(seq->card() - 1);
            }
            double right = list[i].points[0].x(), top = list[i].points[0].y();
            for (const QPointF &p : outline(list[i], 16)) {
                right = std::max(right, p.x());
                top = std::min(top, p.y());
            }
            addText(values, QString(labels[i]).replace(QLatin1Char('\n'), QStringLiteral("; ")), QPointF(right + 2, top), false, utf8);
            anyValues = true;
        }
    }
    // Spatial Transformation, Graphic Layer, Softcopy Presentation LUT.
    put(DCM_ImageRotation, QByteArray::number(((request.view.rotation % 360) + 360) % 360));
    put(DCM_ImageHorizontalFlip, request.view.flipHorizontally ? "Y" : "N");
    DcmItem *layer = appendItem(ds, DCM_GraphicLayerSequence);
    layer->putAndInsertString(DCM_GraphicLayer, kFindingsLayer);
    layer->putAndInsertString(DCM_GraphicLayerOrder, "1");
    layer->putAndInsertString(DCM_GraphicLayerDescription, "Findings drawn by the reader");
    if (anyValues) {
        DcmItem *values = appendItem(ds, DCM_GraphicLayerSequence);
        values->putAndInsertString(DCM_GraphicLayer, kValuesLayer);
        values->putAndInsertString(DCM_GraphicLayerOrder, "2");
        values->putAndInsertString(DCM_GraphicLayerDescription, "What the findings measured, as shown");
    }
    put(DCM_PresentationLUTShape, request.view.inverse ? "INVERSE" : "IDENTITY");
    return dcmtk::serialize(file, EXS_LittleEndianExplicit);
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/documents/presentationstate.h"

// Reading a Grayscale Softcopy Presentation State: what it applies to, the window and displayed area of each of its
// images, rotation and flip, inversion, its shutter and its overlays, and its graphics as findings; what it holds that
// is not applied, listed.

#include "dcmtksupport.h"
#include "documents/presentationlayers.h"

#include <QLineF>

#include <cmath>

namespace spectrum {

namespace {

QList<QPointF> readPoints(DcmItem *item, const DcmTagKey &tag)
{
    QList<QPointF> points;
    for (unsigned long i = 0;; i += 2) {
        Float32 x = 0, y = 0;
        if (item->findAndGetFloat32(tag, x, i).bad() || item->findAndGetFloat32(tag, y, i + 1).bad())
            break;
        points << QPointF(x, y);
    }
    return points;
}

QList<ImageRef> referencedImages(DcmItem *item, const QString &study, const QString &series)
{
    QList<ImageRef> images;
    DcmSequenceOfItems *seq = nullptr;
    if (item->findAndGetSequence(DCM_ReferencedImageSequence, seq).bad() || !seq)
        return images;
    for (unsigned long i = 0; i < seq->card(); ++i) {
        DcmItem *ref = seq->getItem(i);
        ImageRef r{study, series, dcmtk::getString(ref, DCM_ReferencedSOPClassUID), dcmtk::getString(ref, DCM_ReferencedSOPInstanceUID), 0};
        Sint32 frame = 0;
        if (ref->findAndGetSint32(DCM_ReferencedFrameNumber, frame).good() && frame > 0) {
            for (unsigned long k = 0; ref->findAndGetSint32(DCM_ReferencedFrameNumber, frame, k).good(); ++k) {
                r.frame = int(frame);
                images << r;
            }
        } else {
            images << r;
        }
    }
    return images;
}


/// The display shutter (rectangular, circular, polygonal; a bitmap shutter is listed).
void readShutter(DcmItem *ds, PresentationState &out)
{
    const QString shape = dcmtk::getString(ds, DCM_ShutterShape);
    if (shape.isEmpty())
        return;
    PresentationShutter shutter;
    const QStringList shapes = shape.split(QLatin1Char('\\'));
    if (shapes.contains(QLatin1String("RECTANGULAR"))) {
        Sint32 left = 0, right = 0, upper = 0, lower = 0;
        if (ds->findAndGetSint32(DCM_ShutterLeftVerticalEdge, left).good() && ds->findAndGetSint32(DCM_ShutterRightVerticalEdge, right).good()
            && ds->findAndGetSint32(DCM_ShutterUpperHorizontalEdge, upper).good() && ds->findAndGetSint32(DCM_ShutterLowerHorizontalEdge, lower).good()
            && right >= left && lower >= upper)
            shutter.rectangle = QRectF(QPointF(left - 1, upper - 1), QPointF(right, lower));
    }
    if (shapes.contains(QLatin1String("CIRCULAR"))) {
        Sint32 row = 0, column = 0, radius = 0;
        if (ds->findAndGetSint32(DCM_CenterOfCircularShutter, row, 0).good() && ds->findAndGetSint32(DCM_CenterOfCircularShutter, column, 1).good()
            && ds->findAndGetSint32(DCM_RadiusOfCircularShutter, radius).good() && radius > 0)
            shutter.circle = std::make_pair(QPointF(column - 0.5, row - 0.5), double(radius));
    }
    if (shapes.contains(QLatin1String("POLYGONAL"))) {
        Sint32 row = 0, column = 0;
        for (unsigned long i = 0; ds->findAndGetSint32(DCM_VerticesOfThePolygonalShutter, row, i).good()
                                  && ds->findAndGetSint32(DCM_VerticesOfThePolygonalShutter, column, i + 1).good();
             i += 2)
            shutter.polygon << QPointF(column - 0.5, row - 0.5);
    }
    if (shapes.contains(QLatin1String("BITMAP")))
        out.notShown << QObject::tr("a bitmap display shutter");
    Uint16 value = 0;
    if (ds->findAndGetUint16(DCM_ShutterPresentationValue, value).good())
        shutter.grey = value / 65535.0;
    if (shutter.isEmpty()) {
        out.notShown << QObject::tr("a display shutter (%1) without a usable shape").arg(shape);
        return;
    }
    out.shutter = shutter;
}

/// The overlay planes the state carries and activates (PS3.3 C.9.2, C.11.7): each shown in its layer's grey.
void readOverlays(DcmItem *ds, PresentationState &out)
{
    QHash<QString, double> layerGrey;
    DcmSequenceOfItems *layers = nullptr;
    if (ds->findAndGetSequence(DCM_GraphicLayerSequence, layers).good() && layers)
        for (unsigned long i = 0; i < layers->card(); ++i) {
            Uint16 grey = 0xFFFF;
            layers->getItem(i)->findAndGetUint16(DCM_GraphicLayerRecommendedDisplayGrayscaleValue, grey);
            layerGrey.insert(dcmtk::getString(layers->getItem(i), DCM_GraphicLayer), grey / 65535.0);
        }
    unsigned long total = 0;  // pixels of the planes read
    for (Uint16 group = 0x6000; group <= 0x601E; group += 2) {
        const QString layer = dcmtk::getString(ds, DcmTagKey(group, 0x1001));  // Overlay Activation Layer
        const bool data = ds->tagExists(DcmTagKey(group, 0x3000));
        if (!data && layer.isEmpty())
            continue;
        if (!data) {
            out.notShown << QObject::tr("overlay %1 of the images themselves, activated (the images' own overlays are not shown here)")
                                .arg(group, 4, 16, QLatin1Char('0'));
            continue;
        }
        if (layer.isEmpty())
            continue;  // carried but not activated: not shown, as the standard says
        Uint16 rows = 0, columns = 0, bitsAllocated = 1, bitPosition = 0;
        Sint16 originRow = 1, originColumn = 1;
        ds->findAndGetUint16(DcmTagKey(group, 0x0010), rows);
        ds->findAndGetUint16(DcmTagKey(group, 0x0011), columns);
        ds->findAndGetUint16(DcmTagKey(group, 0x0100), bitsAllocated);
        ds->findAndGetUint16(DcmTagKey(group, 0x0102), bitPosition);
        ds->findAndGetSint16(DcmTagKey(group, 0x0050), originRow, 0);
        ds->findAndGetSint16(DcmTagKey(group, 0x0050), originColumn, 1);
        DcmElement *element = nullptr;
        Uint8 *packed = nullptr;
        const unsigned long need = (unsigned long)(rows) * columns;
        constexpr unsigned long kLargest = 4096UL * 4096UL;  // the planes of one state, all told: more is not an overlay to show
        if (rows == 0 || columns == 0 || total + need > kLargest || bitsAllocated != 1 || bitPosition != 0
            || ds->findAndGetElement(DcmTagKey(group, 0x3000), element).bad()
            || element->getUint8Array(packed).bad() || !packed || element->getLength() * 8UL < need) {
            out.notShown << QObject::tr("overlay %1 in a form not read here").arg(group, 4, 16, QLatin1Char('0'));
            continue;
        }
        total += need;
        Sint32 frames = 1;
        if (ds->findAndGetSint32(DcmTagKey(group, 0x0015), frames).good() && frames > 1)
            out.notShown << QObject::tr("overlay %1 has %2 frames: its first is shown on every image").arg(group, 4, 16, QLatin1Char('0')).arg(frames);
        PresentationOverlay overlay;
        overlay.rows = rows;
        overlay.columns = columns;
        overlay.origin = QPointF(originColumn - 1, originRow - 1);
        overlay.grey = layerGrey.value(layer, 1.0);
        overlay.label = dcmtk::getString(ds, DcmTagKey(group, 0x1500));
        overlay.bits.resize(int(need));
        for (unsigned long i = 0; i < need; ++i)
            overlay.bits[int(i)] = char((packed[i / 8] >> (i % 8)) & 1);
        out.overlays << overlay;
    }
}

} // namespace

Result<PresentationState> readPresentationState(const ByteView &bytes)
{
    dcmtk::registerCodecs();
    DcmFileFormat file;
    if (Error e = dcmtk::parse(bytes, file, dcmtk::ParseExtent::Everything); e.isError())
        return e;
    DcmDataset *ds = file.getDataset();
    if (dcmtk::getString(ds, DCM_SOPClassUID) != QLatin1String(UID_GrayscaleSoftcopyPresentationStateStorage))
        return Error(ErrorCode::InvalidDicom, QStringLiteral("not a Grayscale Softcopy Presentation State"));
    const DicomTextDecoder text = dcmtk::textDecoder(ds);
    PresentationState out;
    out.identity = dcmtk::readIdentity(ds);
    out.label = dcmtk::getString(ds, DCM_ContentLabel, &text);
    out.description = dcmtk::getString(ds, DCM_ContentDescription, &text);
    out.creatorName = dcmtk::getString(ds, DCM_ContentCreatorName, &text);
    out.creationDateTime = dcmtk::getString(ds, DCM_PresentationCreationDate) + dcmtk::getString(ds, DCM_PresentationCreationTime).left(6);
    const QString study = out.identity.studyInstanceUid;
    DcmSequenceOfItems *seq = nullptr;
    if (ds->findAndGetSequence(DCM_ReferencedSeriesSequence, seq).good() && seq)
        for (unsigned long i = 0; i < seq->card(); ++i)
            out.images << referencedImages(seq->getItem(i), study, dcmtk::getString(seq->getItem(i), DCM_SeriesInstanceUID));
    // Windows and displayed areas, each for the images it names (none named: every image of the state).
    if (ds->findAndGetSequence(DCM_SoftcopyVOILUTSequence, seq).good() && seq) {
        for (unsigned long i = 0; i < seq->card(); ++i) {
            DcmItem *voi = seq->getItem(i);
            Float64 centre = 0, width = 0;
            if (voi->findAndGetFloat64(DCM_WindowCenter, centre).good() && voi->findAndGetFloat64(DCM_WindowWidth, width).good() && width > 0)
                out.windows << PresentationWindow{referencedImages(voi, study, QString()), {double(centre), double(width)}};
            else if (voi->tagExists(DCM_VOILUTSequence))
                out.notShown << QObject::tr("a VOI LUT table (its images are shown in their own window here)");
        }
    }
    if (ds->findAndGetSequence(DCM_DisplayedAreaSelectionSequence, seq).good() && seq) {
        for (unsigned long i = 0; i < seq->card(); ++i) {
            DcmItem *area = seq->getItem(i);
            Sint32 l = 0, t = 0, r = 0, b = 0;
            if (area->findAndGetSint32(DCM_DisplayedAreaTopLeftHandCorner, l, 0).good() && area->findAndGetSint32(DCM_DisplayedAreaTopLeftHandCorner, t, 1).good()
                && area->findAndGetSint32(DCM_DisplayedAreaBottomRightHandCorner, r, 0).good()
                && area->findAndGetSint32(DCM_DisplayedAreaBottomRightHandCorner, b, 1).good())  // corners either way round
                out.areas << PresentationArea{referencedImages(area, study, QString()),
                                              QRectF(QPointF(std::min(l, r) - 1, std::min(t, b) - 1), QPointF(std::max(l, r), std::max(t, b)))};
            const QString mode = dcmtk::getString(area, DCM_PresentationSizeMode);
            if (mode != QLatin1String("SCALE TO FIT"))
                out.notShown << QObject::tr("size mode %1: the displayed area is fitted to the pane instead").arg(mode);
        }
    }
    if (!out.images.isEmpty()) {
        const PresentationView first = out.viewFor(out.images.first().sopInstanceUid, out.images.first().frame);
        out.view.window = first.window;
        out.view.displayedArea = first.displayedArea;
    }
    readShutter(ds, out);
    readOverlays(ds, out);
    Uint16 rotation = 0;
    if (ds->findAndGetUint16(DCM_ImageRotation, rotation).good())
        out.view.rotation = int(rotation);
    out.view.flipHorizontally = dcmtk::getString(ds, DCM_ImageHorizontalFlip) == QLatin1String("Y");
    out.view.inverse = dcmtk::getString(ds, DCM_PresentationLUTShape) == QLatin1String("INVERSE");
    if (ds->findAndGetSequence(DCM_GraphicAnnotationSequence, seq).good() && seq) {
        for (unsigned long i = 0; i < seq->card(); ++i) {
            DcmItem *ann = seq->getItem(i);
            if (dcmtk::getString(ann, DCM_GraphicLayer) == QLatin1String(kValuesLayer))
                continue;  // ours: what the findings measured, measured again where they are shown
            QList<ImageRef> on = referencedImages(ann, study, QString());
            if (on.isEmpty())
                on = out.images;  // none named: every image of the state
            QList<Annotation> list;
            DcmSequenceOfItems *graphics = nullptr;
            if (ann->findAndGetSequence(DCM_GraphicObjectSequence, graphics).good() && graphics) {
                for (unsigned long g = 0; g < graphics->card(); ++g) {
                    DcmItem *item = graphics->getItem(g);
                    const QString units = dcmtk::getString(item, DCM_GraphicAnnotationUnits);
                    const QString type = dcmtk::getString(item, DCM_GraphicType);
                    const QList<QPointF> points = readPoints(item, DCM_GraphicData);
                    if (units != QLatin1String("PIXEL")) {
                        out.notShown << QObject::tr("a %1 in display units (not tied to the image)").arg(type);
                        continue;
                    }
                    Annotation a;
                    if (type == QLatin1String("POINT") && points.size() == 1) {
                        a.kind = AnnotationKind::Point;
                    } else if ((type == QLatin1String("POLYLINE") || type == QLatin1String("INTERPOLATED")) && points.size() >= 2) {
                        const bool closed = points.size() >= 4 && QLineF(points.first(), points.last()).length() < 1e-3;
                        a.kind = closed ? AnnotationKind::Polygon : points.size() == 2 ? AnnotationKind::Distance : AnnotationKind::Polyline;
                        a.points = points;
                        if (closed)
                            a.points.removeLast();
                        if (closed && a.points.size() > 32)
                            a.kind = AnnotationKind::Freehand;
                        list << a;
                        continue;
                    } else if (type == QLatin1String("CIRCLE") && points.size() == 2) {
                        const double r = QLineF(points[0], points[1]).length();
                        a.kind = AnnotationKind::Ellipse;
                        a.points = {points[0] - QPointF(r, r), points[0] + QPointF(r, r)};
                        list << a;
                        continue;
                    } else if (type == QLatin1String("ELLIPSE") && points.size() == 4
                               && (std::abs(points[0].x() - points[1].x()) < 1e-3 || std::abs(points[0].y() - points[1].y()) < 1e-3)) {
                        const QPointF c = (points[0] + points[1]) / 2;
                        const double hx = std::max(std::abs(points[0].x() - points[1].x()), std::abs(points[2].x() - points[3].x())) / 2;
                        const double hy = std::max(std::abs(points[0].y() - points[1].y()), std::abs(points[2].y() - points[3].y())) / 2;
                        a.kind = AnnotationKind::Ellipse;
                        a.points = {c - QPointF(hx, hy), c + QPointF(hx, hy)};
                        list << a;
                        continue;
                    } else {
                        out.notShown << QObject::tr("a %1 graphic of %2 points").arg(type).arg(points.size());
                        continue;
                    }
                    a.points = points;
                    list << a;
                }
            }
            if (ann->findAndGetSequence(DCM_TextObjectSequence, graphics).good() && graphics) {
                for (unsigned long g = 0; g < graphics->card(); ++g) {
                    DcmItem *item = graphics->getItem(g);
                    Annotation a;
                    a.kind = AnnotationKind::Text;
                    a.text = dcmtk::getString(item, DCM_UnformattedTextValue, &text);
                    QList<QPointF> anchor = dcmtk::getString(item, DCM_AnchorPointAnnotationUnits) == QLatin1String("PIXEL") ? readPoints(item, DCM_AnchorPoint)
                                                                                                                          : QList<QPointF>();
                    if (anchor.isEmpty() && dcmtk::getString(item, DCM_BoundingBoxAnnotationUnits) == QLatin1String("PIXEL"))
                        anchor = readPoints(item, DCM_BoundingBoxTopLeftHandCorner);
                    if (anchor.isEmpty()) {
                        out.notShown << QObject::tr("the text \"%1\" placed in display units").arg(a.text);
                        continue;
                    }
                    a.points = {anchor.first()};
                    list << a;
                }
            }
            for (const ImageRef &r : on)
                out.annotations[presentationKey(r.sopInstanceUid, r.frame)] << list;
        }
    }
    return out;
}

bool PresentationShutter::shows(QPointF p) const
{
    if (rectangle && !rectangle->contains(p))
        return false;
    if (circle && QLineF(circle->first, p).length() > circle->second)
        return false;
    if (polygon.size() >= 3) {
        bool inside = false;  // even-odd: a ray to the right crosses the edges an odd number of times
        for (int i = 0, j = int(polygon.size()) - 1; i < polygon.size(); j = i++) {
            const QPointF &a = polygon[i], &b = polygon[j];
            if ((a.y() > p.y()) != (b.y() > p.y()) && p.x() < (b.x() - a.x()) * (p.y() - a.y()) / (b.y() - a.y()) + a.x())
                inside = !inside;
        }
        if (!inside)
            return false;
    }
    return true;
}

namespace {

bool names(const QList<ImageRef> &images, const QString &sop, int frame)
{
    return images.isEmpty()
        || std::any_of(images.begin(), images.end(), [&](const ImageRef &r) { return r.sopInstanceUid == sop && (r.frame == 0 || r.frame == frame); });
}

} // namespace

bool PresentationState::appliesTo(const QString &sopInstanceUid, int frame) const
{
    return !images.isEmpty() && names(images, sopInstanceUid, frame);
}

PresentationView PresentationState::viewFor(const QString &sopInstanceUid, int frame) const
{
    PresentationView v;
    v.rotation = view.rotation;
    v.flipHorizontally = view.flipHorizontally;
    v.inverse = view.inverse;
    for (const PresentationWindow &w : windows)
        if (names(w.images, sopInstanceUid, frame)) {
            v.window = w.window;
            break;
        }
    for (const PresentationArea &a : areas)
        if (names(a.images, sopInstanceUid, frame)) {
            v.displayedArea = a.area;
            break;
        }
    return v;
}

QList<PresentationOverlay> PresentationState::overlaysFor(const QString &sopInstanceUid, int frame) const
{
    QList<PresentationOverlay> on;
    for (const PresentationOverlay &o : overlays)
        if (names(o.images, sopInstanceUid, frame))
            on << o;
    return on;
}

} // namespace spectrum

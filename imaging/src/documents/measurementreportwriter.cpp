// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/documents/measurementreport.h"

#include "dcmtksupport.h"
#include "documents/srcodes.h"
#include "documents/srdocument.h"
#include "spectrum/imaging/tools/measurementtool.h"
#include "spectrum/core/uid.h"

#include <dcmtk/dcmsr/dsrdoc.h>

#include <QCoreApplication>
#include <QDateTime>
#include <QHash>
#include <QRectF>

#include <cmath>

namespace spectrum {

namespace {

using T = DSRTypes;
using srdoc::ascii;

/// A DS value: at most 16 characters.
OFString decimal(double v)
{
    for (int digits = 10; digits > 1; --digits) {
        const QByteArray s = QByteArray::number(v, 'g', digits);
        if (s.size() <= 16)
            return OFString(s.constData());
    }
    return OFString("0");
}

/// Builds the content tree; every add is checked, the first failure ends the document.
class TreeBuilder
{
public:
    TreeBuilder(DSRDocumentTree &tree, srdoc::Encoder encode) : m_tree(tree), m_encode(encode) {}

    /// After the current item (`child`: below it), with `concept`.
    void add(T::E_RelationshipType rel, T::E_ValueType type, const DSRCodedEntryValue &concept, bool child = false)
    {
        if (failed())
            return;
        if (m_tree.addContentItem(rel, type, child ? T::AM_belowCurrent : T::AM_afterCurrent) == 0) {
            fail(QStringLiteral("cannot add a %1 content item").arg(QString::fromLatin1(T::valueTypeToDefinedTerm(type))));
            return;
        }
        if (!concept.isEmpty())
            check(item().setConceptName(concept), "concept name");
    }
    DSRContentItem &item() { return m_tree.getCurrentContentItem(); }
    void up()
    {
        if (!failed() && m_tree.goUp() == 0)
            fail(QStringLiteral("the content tree has no parent here"));
    }
    void check(const OFCondition &c, const char *what)
    {
        if (!failed() && c.bad())
            fail(QStringLiteral("%1: %2").arg(QLatin1String(what), QLatin1String(c.text())));
    }
    void fail(const QString &why)
    {
        if (!failed())
            m_error = Error(ErrorCode::InvalidArgument, QStringLiteral("cannot write the report: %1").arg(why));
    }
    bool failed() const { return m_error.isError(); }
    const srdoc::Encoder &encode() const { return m_encode; }
    const Error &error() const { return m_error; }

    void text(T::E_RelationshipType rel, const DSRCodedEntryValue &concept, const QString &value, bool child = false)
    {
        add(rel, T::VT_Text, concept, child);
        if (!failed())
            check(item().setStringValue(m_encode(value)), "text");
    }
    void code(T::E_RelationshipType rel, const DSRCodedEntryValue &concept, const DSRCodedEntryValue &value, bool child = false)
    {
        add(rel, T::VT_Code, concept, child);
        if (!failed())
            check(item().setCodeValue(value), "code");
    }
    void image(T::E_RelationshipType rel, const ImageRef &ref, bool child = false)
    {
        add(rel, T::VT_Image, DSRCodedEntryValue(), child);
        if (failed())
            return;
        DSRImageReferenceValue value(ascii(ref.sopClassUid), ascii(ref.sopInstanceUid));
        if (ref.frame > 0)
            value.getFrameList().addItem(ref.frame);
        check(item().setImageReference(value), "image reference");
    }
    /// A SCOORD below or after the current item, with its image below it; the cursor stays on the SCOORD.
    void scoord(T::E_RelationshipType rel, const DSRCodedEntryValue &concept, T::E_GraphicType type, const QList<QPointF> &points,
                const ImageRef &ref, bool child)
    {
        add(rel, T::VT_SCoord, concept, child);
        if (failed())
            return;
        DSRSpatialCoordinatesValue value(type);
        for (const QPointF &p : points)
            value.getGraphicDataList().addItem(Float32(p.x()), Float32(p.y()));
        check(item().setSpatialCoordinates(value), "spatial coordinates");
        image(T::RT_selectedFrom, ref, true);
        up();
    }

private:
    DSRDocumentTree &m_tree;
    srdoc::Encoder m_encode;
    Error m_error;
};

T::E_GraphicType graphicType(ToolShape::Type type)
{
    switch (type) {
    case ToolShape::Type::Point:
    case ToolShape::Type::Anchor: return T::GT_Point;
    case ToolShape::Type::Ellipse: return T::GT_Ellipse;
    case ToolShape::Type::Polyline:
    case ToolShape::Type::Arrow: break;
    }
    return T::GT_Polyline;
}

void addValue(TreeBuilder &b, const MeasuredValue &v, const QString &modality, bool child)
{
    std::optional<DSRCodedEntryValue> derivation = srcodes::derivationOf(v.quantity);
    DSRCodedEntryValue concept = srcodes::conceptOf(v.quantity);
    if (concept.isEmpty())
        concept = srcodes::pixelQuantity(v.unit, modality);
    b.add(T::RT_contains, T::VT_Num, concept, child);
    if (b.failed())
        return;
    DSRNumericMeasurementValue num(decimal(v.value), DSRCodedEntryValue(ascii(v.unit), "UCUM", b.encode()(v.unitMeaning.isEmpty() ? v.unit : v.unitMeaning)));
    b.check(b.item().setNumericValue(num), "numeric value");
    if (derivation) {
        b.code(T::RT_hasConceptMod, DSRCodedEntryValue(CODE_DCM_Derivation), *derivation, true);
        b.up();
    }
}

/// The value of `q` among `values`, if measured.
const MeasuredValue *valueOf(const QList<MeasuredValue> &values, Quantity q)
{
    for (const MeasuredValue &v : values)
        if (v.quantity == q)
            return &v;
    return nullptr;
}

/// One NUM inferred from one or more SCOORDs (each its own image reference).
void numFromScoords(TreeBuilder &b, const MeasuredValue &v, const QString &modality, const QList<QList<QPointF>> &lines, T::E_GraphicType type,
                    const ImageRef &ref)
{
    addValue(b, v, modality, false);
    bool first = true;
    for (const QList<QPointF> &points : lines) {
        b.scoord(T::RT_inferredFrom, DSRCodedEntryValue(), type, points, ref, first);
        first = false;
    }
    b.up();
}

void addFinding(TreeBuilder &b, const ReportedFinding &f, const QString &modality, int index, bool firstGroup)
{
    const Annotation &a = f.annotation;
    b.add(T::RT_contains, T::VT_Container, DSRCodedEntryValue(CODE_DCM_MeasurementGroup), firstGroup);
    if (b.failed())
        return;
    // A region's group is TID 1410 (Planar ROI Measurements), the others TID 1501 (Measurement Group).
    b.check(b.item().setTemplateIdentification(isRegion(a.kind) ? "1410" : "1501", "DCMR"), "template");
    const QString label = !f.label.isEmpty() ? f.label : (!a.text.isEmpty() ? a.text : QStringLiteral("%1 %2").arg(kindName(a.kind)).arg(index));
    b.text(T::RT_hasObsContext, DSRCodedEntryValue(CODE_DCM_TrackingIdentifier), label.left(64), true);
    b.add(T::RT_hasObsContext, T::VT_UIDRef, DSRCodedEntryValue(CODE_DCM_TrackingUniqueIdentifier));
    if (!b.failed())
        b.check(b.item().setStringValue(ascii(a.trackingUid)), "tracking UID");
    const MeasurementTool &tool = measurementTool(a.kind);
    for (const ReportItem &item : tool.reportItems(a)) {
        if (item.shapes.isEmpty())
            continue;
        QList<QList<QPointF>> lines;
        for (const ToolShape &s : item.shapes)
            lines << s.points;
        const T::E_GraphicType type = graphicType(item.shapes.first().type);
        switch (item.role) {
        case ReportItem::Role::Measurement:
            if (const MeasuredValue *v = valueOf(f.values, item.quantity))
                numFromScoords(b, *v, modality, lines, type, f.image);
            else if (item.regionWhenUnmeasured)
                b.scoord(T::RT_contains, DSRCodedEntryValue(CODE_DCM_ImageRegion), type, lines.first(), f.image, false);
            break;
        case ReportItem::Role::Region:
            b.scoord(T::RT_contains, DSRCodedEntryValue(CODE_DCM_ImageRegion), type, lines.first(), f.image, false);
            for (const MeasuredValue &v : f.values)
                addValue(b, v, modality, false);
            break;
        case ReportItem::Role::Comment:
            b.text(T::RT_contains, DSRCodedEntryValue(CODE_DCM_Comment), a.text.isEmpty() ? tool.name() : a.text);
            b.scoord(T::RT_inferredFrom, DSRCodedEntryValue(), type, lines.first(), f.image, true);
            b.up();
            break;
        }
    }
    if (!a.text.isEmpty() && tool.words() == Words::None)  // a label beside the values; an arrow's words are its comment
        b.text(T::RT_contains, DSRCodedEntryValue(CODE_DCM_Comment), a.text);
    b.up();
}

} // namespace

Result<QByteArray> writeMeasurementReport(const MeasurementReportRequest &request)
{
    dcmtk::registerCodecs();
    const DicomIdentity &study = request.study;
    if (!isValidUid(study.studyInstanceUid))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the report names no study"));
    if (request.findings.isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("no findings to report"));
    for (const ReportedFinding &f : request.findings) {
        if (f.image.sopInstanceUid.isEmpty() || f.image.sopClassUid.isEmpty())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("a finding names no image"));
        if (f.image.studyInstanceUid != study.studyInstanceUid)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("a finding lies on an image of another study (%1)").arg(f.image.studyInstanceUid));
        if (!isWellFormed(f.annotation))
            return Error(ErrorCode::InvalidArgument, QStringLiteral("a %1 without the points it needs").arg(kindName(f.annotation.kind)));
    }

    QStringList texts{request.observerName};
    for (const ReportedFinding &f : request.findings)
        texts << f.label << f.annotation.text;
    DSRDocument doc(T::DT_ComprehensiveSR);
    const Result<srdoc::Encoder> started = srdoc::startDocument(
        doc, study, texts, request.seriesDescription.isEmpty() ? QStringLiteral("Spectrum findings") : request.seriesDescription,
        request.seriesNumber > 0 ? request.seriesNumber : 9001, request.instanceNumber);
    if (!started.isOk())
        return started.error();
    const srdoc::Encoder encode = started.value();
    doc.completeDocument();

    DSRDocumentTree &tree = doc.getTree();
    TreeBuilder b(tree, encode);
    b.add(T::RT_isRoot, T::VT_Container, DSRCodedEntryValue(CODE_DCM_ImagingMeasurementReport));
    b.check(b.item().setTemplateIdentification("1500", "DCMR"), "template");
    b.code(T::RT_hasConceptMod, DSRCodedEntryValue(CODE_DCM_LanguageOfContentItemAndDescendants),
           DSRCodedEntryValue("en-US", "RFC5646", "English (United States)"), true);
    b.code(T::RT_hasObsContext, DSRCodedEntryValue(CODE_DCM_ObserverType), DSRCodedEntryValue(CODE_DCM_Person));
    if (!request.observerName.isEmpty()) {
        b.add(T::RT_hasObsContext, T::VT_PName, DSRCodedEntryValue(CODE_DCM_PersonObserverName));
        if (!b.failed())
            b.check(b.item().setStringValue(encode(request.observerName)), "observer name");
    }
    b.code(T::RT_hasConceptMod, DSRCodedEntryValue(CODE_DCM_ProcedureReported), DSRCodedEntryValue(CODE_SCT_ImagingProcedure));

    // The images measured, each once.
    b.add(T::RT_contains, T::VT_Container, DSRCodedEntryValue(CODE_DCM_ImageLibrary));
    b.add(T::RT_contains, T::VT_Container, DSRCodedEntryValue(CODE_DCM_ImageLibraryGroup), true);
    QList<ImageRef> library;
    for (const ReportedFinding &f : request.findings) {
        ImageRef whole = f.image;
        whole.frame = 0;
        if (!library.contains(whole))
            library << whole;
    }
    for (int i = 0; i < library.size(); ++i)
        b.image(T::RT_contains, library[i], i == 0);
    b.up();
    b.up();

    b.add(T::RT_contains, T::VT_Container, DSRCodedEntryValue(CODE_DCM_ImagingMeasurements));
    for (int i = 0; i < request.findings.size(); ++i) {
        ReportedFinding f = request.findings[i];
        if (f.annotation.trackingUid.isEmpty())
            f.annotation.trackingUid = makeUid();
        addFinding(b, f, study.modality, i + 1, i == 0);
    }
    if (b.failed())
        return b.error();

    for (const ImageRef &ref : library)
        doc.getCurrentRequestedProcedureEvidence().addItem(ascii(ref.studyInstanceUid), ascii(ref.seriesInstanceUid), ascii(ref.sopClassUid),
                                                           ascii(ref.sopInstanceUid));

    DcmFileFormat file;
    if (OFCondition c = doc.write(*file.getDataset()); c.bad())
        return dcmtk::toError(c, QStringLiteral("cannot write the report"));
    DcmDataset *ds = file.getDataset();
    // Our own UIDs (DCMTK would use its root), the series one when the caller keeps one series of findings.
    ds->putAndInsertString(DCM_SOPInstanceUID, ascii(makeUid()).c_str());
    ds->putAndInsertString(DCM_SeriesInstanceUID, ascii(request.seriesInstanceUid.isEmpty() ? makeUid() : request.seriesInstanceUid).c_str());
    return dcmtk::serialize(file, EXS_LittleEndianExplicit);
}

} // namespace spectrum

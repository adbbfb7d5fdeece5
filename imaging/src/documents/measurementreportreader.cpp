// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/documents/measurementreport.h"

#include "dcmtksupport.h"
#include "documents/srcodes.h"
#include "documents/srdocument.h"

#include <dcmtk/dcmsr/dsrdoc.h>

#include <QHash>
#include <QLineF>

#include <cmath>
#include <vector>

namespace spectrum {

namespace {

using T = DSRTypes;

QString text(const OFString &s)
{
    return QString::fromUtf8(s.c_str());
}

/// One content item, as much of it as the reader needs, with its place in the tree.
struct Node
{
    int parent = -1;
    QList<int> children;
    T::E_RelationshipType relation = T::RT_invalid;
    T::E_ValueType type = T::VT_invalid;
    DSRCodedEntryValue concept;
    QString string;                   ///< TEXT, UIDREF, PNAME
    DSRCodedEntryValue code;          ///< CODE
    QString number;                   ///< NUM
    DSRCodedEntryValue unit;
    T::E_GraphicType graphic = T::GT_invalid;
    QList<QPointF> points;            ///< SCOORD
    QString sopClass, sopInstance;    ///< IMAGE
    int frame = 0;
    size_t id = 0;
    size_t referenced = 0;            ///< by-reference: the target's node ID
};

std::vector<Node> flatten(DSRDocumentTree &tree)
{
    std::vector<Node> nodes;
    std::vector<int> stack;  // index of the last node at each level
    if (tree.gotoRoot() == 0)
        return nodes;
    do {
        const size_t level = tree.getLevel();  // 1 for the root
        DSRContentItem &item = tree.getCurrentContentItem();
        Node n;
        n.relation = item.getRelationshipType();
        n.type = item.getValueType();
        n.concept = item.getConceptName();
        n.id = tree.getNodeID();
        switch (n.type) {
        case T::VT_Text:
        case T::VT_UIDRef:
        case T::VT_PName:
            n.string = text(item.getStringValue());
            break;
        case T::VT_Code:
            n.code = item.getCodeValue();
            break;
        case T::VT_Num:
            n.number = text(item.getNumericValue().getNumericValue());
            n.unit = item.getNumericValue().getMeasurementUnit();
            break;
        case T::VT_SCoord: {
            DSRSpatialCoordinatesValue s = item.getSpatialCoordinates();
            n.graphic = s.getGraphicType();
            const DSRGraphicDataList &data = s.getGraphicDataList();
            for (size_t i = 1; i <= data.getNumberOfItems(); ++i) {
                const DSRGraphicDataItem &p = data.getItem(i);
                n.points << QPointF(p.Column, p.Row);
            }
            break;
        }
        case T::VT_Image: {
            DSRImageReferenceValue r = item.getImageReference();
            n.sopClass = text(r.getSOPClassUID());
            n.sopInstance = text(r.getSOPInstanceUID());
            if (!r.getFrameList().isEmpty())
                n.frame = r.getFrameList().getItem(1);
            break;
        }
        case T::VT_byReference:
            n.referenced = item.getReferencedNodeID();
            break;
        default:
            break;
        }
        const int index = int(nodes.size());
        stack.resize(level);
        stack[level - 1] = index;
        if (level >= 2) {
            n.parent = stack[level - 2];
            nodes[size_t(n.parent)].children << index;
        }
        nodes.push_back(n);
    } while (tree.iterate() > 0);
    return nodes;
}

class Interpreter
{
public:
    Interpreter(std::vector<Node> nodes, const QString &studyUid) : m_nodes(std::move(nodes)), m_studyUid(studyUid)
    {
        for (int i = 0; i < int(m_nodes.size()); ++i)
            m_byId.insert(m_nodes[size_t(i)].id, i);
    }

    void run(ReadReport &out)
    {
        QSet<int> used;  // NUMs shown with a finding
        for (int i = 0; i < int(m_nodes.size()); ++i) {
            if (m_nodes[size_t(i)].type == T::VT_SCoord)
                scoord(i, out, used);
            else if (m_nodes[size_t(i)].type == T::VT_SCoord3D)
                out.notShown << QObject::tr("3-D coordinates (%1): not drawn on 2-D images").arg(meaningOf(owner(i)));
        }
        mergeBidirectional(out);
        // Values of no finding: listed.
        for (int i = 0; i < int(m_nodes.size()); ++i) {
            const Node &n = m_nodes[size_t(i)];
            if (n.type == T::VT_Num && !used.contains(i) && !n.number.isEmpty())
                out.notShown << QObject::tr("%1 %2 %3%4: no image coordinates")
                                    .arg(meaningOf(i), n.number, text(n.unit.getCodeMeaning()), groupLabel(i).isEmpty() ? QString() : QStringLiteral(" (%1)").arg(groupLabel(i)));
        }
    }

private:
    const Node &at(int i) const { return m_nodes[size_t(i)]; }
    QString meaningOf(int i) const { return i < 0 ? QString() : text(at(i).concept.getCodeMeaning()); }

    /// The node whose coordinates these are: the NUM/TEXT/CODE it is inferred from, or the group itself.
    int owner(int scoord) const { return at(scoord).parent; }

    /// The measurement group around `i`: the nearest container above it.
    int groupOf(int i) const
    {
        for (int p = at(i).parent; p >= 0; p = at(p).parent)
            if (at(p).type == T::VT_Container)
                return p;
        return -1;
    }

    QString groupLabel(int i) const
    {
        const int g = groupOf(i);
        if (g < 0)
            return QString();
        for (int c : at(g).children) {
            if (at(c).type == T::VT_Text && srcodes::same(at(c).concept, CODE_DCM_TrackingIdentifier))
                return at(c).string;
        }
        for (int c : at(g).children) {
            if (at(c).type == T::VT_Code && srcodes::same(at(c).concept, CODE_DCM_Finding))
                return text(at(c).code.getCodeMeaning());
        }
        return QString();
    }

    /// What coordinates are named in a list: their own concept, else what they are inferred for, and the group.
    QString describe(int scoord) const
    {
        const QString own = meaningOf(scoord).isEmpty() ? meaningOf(owner(scoord)) : meaningOf(scoord);
        const QString label = groupLabel(scoord);
        return label.isEmpty() ? own : QStringLiteral("%1 (%2)").arg(own, label);
    }

    QString groupString(int g, const DSRBasicCodedEntry &concept, T::E_ValueType type) const
    {
        if (g < 0)
            return QString();
        for (int c : at(g).children)
            if (at(c).type == type && srcodes::same(at(c).concept, concept))
                return at(c).string;
        return QString();
    }

    /// The image a SCOORD is selected from (its IMAGE child, by value or by reference).
    const Node *imageOf(int scoord) const
    {
        for (int c : at(scoord).children) {
            const Node *n = &at(c);
            if (n->type == T::VT_byReference) {
                auto it = m_byId.constFind(n->referenced);
                n = it == m_byId.constEnd() ? nullptr : &at(*it);
            }
            if (n && n->type == T::VT_Image)
                return n;
        }
        return nullptr;
    }

    /// A NUM's value, read as a Quantity when the reader knows it.
    std::optional<MeasuredValue> valueOf(int i) const
    {
        const Node &n = at(i);
        bool ok = false;
        const double v = n.number.trimmed().toDouble(&ok);
        if (!ok)
            return std::nullopt;
        const DSRCodedEntryValue *derivation = nullptr;
        for (int c : n.children)
            if (at(c).type == T::VT_Code && srcodes::same(at(c).concept, CODE_DCM_Derivation))
                derivation = &at(c).code;
        std::optional<Quantity> q = srcodes::quantityOf(n.concept, derivation);
        if (!q && !derivation) {
            const DSRCodedEntryValue &c = n.concept;
            if (srcodes::same(c, CODE_DCM_AttenuationCoefficient) || srcodes::same(c, CODE_DCM_MRSignalIntensity)
                || (c.getCodeValue() == "PIXVAL" && c.getCodingSchemeDesignator() == "99SPECTRUM"))
                q = Quantity::Value;
        }
        if (!q)
            return std::nullopt;
        const QString unit = text(n.unit.getCodeValue());
        QString meaning = text(n.unit.getCodeMeaning());
        if (unit == QLatin1String("[hnsf'U]"))
            meaning = QStringLiteral("HU");
        else if (unit == QLatin1String("mm"))
            meaning = QStringLiteral("mm");
        else if (unit == QLatin1String("mm2"))
            meaning = QStringLiteral("mm²");
        else if (unit == QLatin1String("deg"))
            meaning = QStringLiteral("°");
        else if (unit == QLatin1String("1") && (meaning == QLatin1String("1") || meaning.contains(QLatin1String("no units"), Qt::CaseInsensitive)))
            meaning.clear();
        return MeasuredValue{*q, v, unit, meaning, 0};
    }

    void addGroupValues(int scoord, ReportedFinding &f, QSet<int> &used) const
    {
        // The NUM it is inferred from, and the NUMs of its group that hang on no coordinates of their own.
        QList<int> nums;
        const int own = owner(scoord);
        if (own >= 0 && at(own).type == T::VT_Num)
            nums << own;
        const int g = groupOf(scoord);
        if (g >= 0 && (own == g || at(own).type != T::VT_Num)) {
            for (int c : at(g).children) {
                if (at(c).type != T::VT_Num)
                    continue;
                bool hasOwnCoordinates = false;
                for (int cc : at(c).children)
                    hasOwnCoordinates |= at(cc).type == T::VT_SCoord;
                if (!hasOwnCoordinates)
                    nums << c;
            }
        }
        // The group's qualitative content (a finding type, a finding site, an evaluation, words): listed as written.
        if (g >= 0) {
            for (int c : at(g).children) {
                const Node &n = at(c);
                if (n.type == T::VT_Code && !srcodes::same(n.concept, CODE_DCM_Derivation))
                    f.otherValues << QStringLiteral("%1: %2").arg(meaningOf(c), text(n.code.getCodeMeaning()));
                else if (n.type == T::VT_Text && !srcodes::same(n.concept, CODE_DCM_TrackingIdentifier) && !srcodes::same(n.concept, CODE_DCM_Comment))
                    f.otherValues << QStringLiteral("%1: %2").arg(meaningOf(c), n.string);
            }
        }
        for (int i : nums) {
            used.insert(i);
            if (std::optional<MeasuredValue> v = valueOf(i))
                f.values << *v;
            else
                f.otherValues << QStringLiteral("%1 %2 %3").arg(meaningOf(i), at(i).number, text(at(i).unit.getCodeMeaning())).trimmed();
        }
    }

    void scoord(int i, ReadReport &out, QSet<int> &used)
    {
        const Node &s = at(i);
        const int own = owner(i);
        const QString label = groupLabel(i);
        const Node *image = imageOf(i);
        if (!image || image->sopInstance.isEmpty()) {
            out.notShown << QObject::tr("%1: its coordinates name no image").arg(describe(i));
            return;
        }
        if (s.points.isEmpty()) {
            out.notShown << QObject::tr("%1: coordinates without points").arg(describe(i));
            return;
        }
        ReportedFinding f;
        f.image.studyInstanceUid = m_studyUid;
        f.image.sopClassUid = image->sopClass;
        f.image.sopInstanceUid = image->sopInstance;
        f.image.frame = image->frame;
        f.label = label;
        const int g = groupOf(i);
        f.annotation.trackingUid = groupString(g, CODE_DCM_TrackingUniqueIdentifier, T::VT_UIDRef);
        addGroupValues(i, f, used);
        Annotation &a = f.annotation;
        a.points = s.points;
        const bool fromText = own >= 0 && at(own).type == T::VT_Text;
        if (fromText)
            a.text = at(own).string;
        else if (g >= 0)
            for (int c : at(g).children)
                if (at(c).type == T::VT_Text && srcodes::same(at(c).concept, CODE_DCM_Comment))
                    a.text = at(c).string;
        const bool isClosed = s.points.size() >= 4 && QLineF(s.points.first(), s.points.last()).length() < 1e-3;
        // What the coordinates measure, when a NUM the reader knows is inferred from them.
        Quantity measured = Quantity::Value;
        bool hasMeasured = false;
        if (own >= 0 && at(own).type == T::VT_Num) {
            if (const std::optional<MeasuredValue> v = valueOf(own)) {
                measured = v->quantity;
                hasMeasured = true;
            }
        }
        switch (s.graphic) {
        case T::GT_Point:
            a.kind = fromText ? AnnotationKind::Text : AnnotationKind::Point;
            a.points = {s.points.first()};
            break;
        case T::GT_Multipoint:
            if (s.points.size() == 1) {
                a.kind = AnnotationKind::Point;
            } else {
                a.kind = AnnotationKind::Polyline;
                out.notShown << QObject::tr("%1: %2 separate points, drawn joined").arg(describe(i)).arg(s.points.size());
            }
            break;
        case T::GT_Circle: {
            if (s.points.size() != 2) {
                out.notShown << QObject::tr("a circle (%1) without its centre and a point on it").arg(label);
                return;
            }
            const double r = QLineF(s.points[0], s.points[1]).length();
            a.kind = AnnotationKind::Ellipse;
            a.points = {s.points[0] - QPointF(r, r), s.points[0] + QPointF(r, r)};
            break;
        }
        case T::GT_Ellipse: {
            if (s.points.size() != 4) {
                out.notShown << QObject::tr("an ellipse (%1) without its two axes").arg(label);
                return;
            }
            const QLineF major(s.points[0], s.points[1]), minor(s.points[2], s.points[3]);
            const QPointF c = (s.points[0] + s.points[1]) / 2;
            const bool axisAligned = std::abs(major.dx()) < 1e-3 || std::abs(major.dy()) < 1e-3;
            if (axisAligned) {
                const double hx = std::max(std::abs(major.dx()), std::abs(minor.dx())) / 2, hy = std::max(std::abs(major.dy()), std::abs(minor.dy())) / 2;
                a.kind = AnnotationKind::Ellipse;
                a.points = {c - QPointF(hx, hy), c + QPointF(hx, hy)};
            } else {
                // A tilted ellipse: its outline as a polygon (our ellipses are upright).
                a.kind = AnnotationKind::Polygon;
                a.points.clear();
                const QPointF u = (s.points[1] - s.points[0]) / 2, v = (s.points[3] - s.points[2]) / 2;
                for (int k = 0; k < 64; ++k) {
                    const double t = 2 * M_PI * k / 64;
                    a.points << c + u * std::cos(t) + v * std::sin(t);
                }
            }
            break;
        }
        case T::GT_Polyline:
            if (isClosed) {
                a.points.removeLast();
                a.kind = a.points.size() > 32 ? AnnotationKind::Freehand : AnnotationKind::Polygon;
                if (a.points.size() == 4 && upright(a.points)) {
                    a.kind = AnnotationKind::Rectangle;
                    a.points = {a.points[0], a.points[2]};
                }
            } else if (fromText && s.points.size() == 2) {
                a.kind = AnnotationKind::Arrow;
            } else if (hasMeasured && measured == Quantity::Angle && s.points.size() == 3) {
                a.kind = AnnotationKind::Angle;
            } else if (s.points.size() == 2) {
                a.kind = AnnotationKind::Distance;
            } else {
                a.kind = AnnotationKind::Polyline;
            }
            break;
        default:
            out.notShown << QObject::tr("%1: coordinates of a kind not drawn").arg(describe(i));
            return;
        }
        // A Cobb angle: two lines inferred for the one NUM; the second joins the first.
        if (hasMeasured && measured == Quantity::CobbAngle && a.kind == AnnotationKind::Distance) {
            for (ReportedFinding &prior : out.findings) {
                if (prior.annotation.kind == AnnotationKind::Distance && m_cobbOwner.value(&prior - out.findings.data(), -1) == own
                    && prior.image.sameImage(f.image)) {
                    prior.annotation.kind = AnnotationKind::CobbAngle;
                    prior.annotation.points << a.points;
                    return;
                }
            }
            m_cobbOwner.insert(int(out.findings.size()), own);
        }
        if (hasMeasured && a.kind == AnnotationKind::Distance && (measured == Quantity::LongAxis || measured == Quantity::ShortAxis))
            m_axes.insert(int(out.findings.size()), {g, measured});
        out.findings << f;
    }

    static bool upright(const QList<QPointF> &p)
    {
        auto level = [](QPointF a, QPointF b) { return std::abs(a.y() - b.y()) < 1e-3; };
        auto plumb = [](QPointF a, QPointF b) { return std::abs(a.x() - b.x()) < 1e-3; };
        return (level(p[0], p[1]) && plumb(p[1], p[2]) && level(p[2], p[3]) && plumb(p[3], p[0]))
            || (plumb(p[0], p[1]) && level(p[1], p[2]) && plumb(p[2], p[3]) && level(p[3], p[0]));
    }

    /// A group's long and short axis, each a two-point line, are one bidirectional measurement.
    void mergeBidirectional(ReadReport &out) const
    {
        QList<int> gone;
        for (auto it = m_axes.constBegin(); it != m_axes.constEnd(); ++it) {
            if (it.value().second != Quantity::LongAxis)
                continue;
            for (auto jt = m_axes.constBegin(); jt != m_axes.constEnd(); ++jt) {
                if (jt.value().second != Quantity::ShortAxis || jt.value().first != it.value().first || gone.contains(jt.key()))
                    continue;
                ReportedFinding &longAxis = out.findings[it.key()];
                const ReportedFinding &shortAxis = out.findings[jt.key()];
                if (!longAxis.image.sameImage(shortAxis.image))
                    continue;
                longAxis.annotation.kind = AnnotationKind::Bidirectional;
                longAxis.annotation.points << shortAxis.annotation.points;
                longAxis.values << shortAxis.values;
                gone << jt.key();
                break;
            }
        }
        std::sort(gone.begin(), gone.end(), std::greater<int>());
        for (int i : gone)
            out.findings.removeAt(i);
    }

    std::vector<Node> m_nodes;
    QString m_studyUid;
    QHash<size_t, int> m_byId;
    QHash<int, int> m_cobbOwner;                     ///< finding index → the Cobb NUM its first line belongs to
    QMap<int, std::pair<int, Quantity>> m_axes;      ///< finding index → (group, long or short axis)
};

} // namespace

Result<ReadReport> readStructuredReport(const ByteView &bytes)
{
    dcmtk::registerCodecs();
    DcmFileFormat file;
    if (Error e = dcmtk::parse(bytes, file, dcmtk::ParseExtent::Everything); e.isError())
        return e;
    DcmDataset *ds = file.getDataset();
    DSRDocument doc;
    // Read leniently (other software's reports break rules we do not need), then say what was not understood.
    if (OFCondition c = doc.read(*ds, srdoc::kLenientRead); c.bad())
        return dcmtk::toError(c, QStringLiteral("not a readable Structured Report"));
    ReadReport out;
    out.identity = dcmtk::readIdentity(ds);
    DSRDocumentTree &tree = doc.getTree();
    if (tree.gotoRoot() > 0) {
        DSRContentItem &root = tree.getCurrentContentItem();
        out.title = text(root.getConceptName().getCodeMeaning());
        OFString templateId, mappingResource;
        root.getTemplateIdentification(templateId, mappingResource);
        out.templateId = text(templateId);
    }
    OFString date, time;
    doc.getContentDate(date);
    doc.getContentTime(time);
    out.contentDateTime = text(date) + text(time).left(6);
    out.completion = QString::fromLatin1(DSRTypes::completionFlagToEnumeratedValue(doc.getCompletionFlag()));
    out.verification = QString::fromLatin1(DSRTypes::verificationFlagToEnumeratedValue(doc.getVerificationFlag()));
    std::vector<Node> nodes = flatten(tree);
    for (const Node &n : nodes) {
        if (n.type == T::VT_PName && srcodes::same(n.concept, CODE_DCM_PersonObserverName) && out.observerName.isEmpty())
            out.observerName = n.string;
    }
    Interpreter(std::move(nodes), out.identity.studyInstanceUid).run(out);
    return out;
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
// Hanging protocols as data: JSON in both directions, the file, and the built-in set.
#include "spectrum/stores/reading/hangingprotocol.h"

#include "reading/userfile.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace spectrum {

namespace {

constexpr const char *kFormat = "spectrum-hanging-protocols/1";

QString studyName(SeriesRule::Study s)
{
    return s == SeriesRule::Study::Prior ? QStringLiteral("prior") : QStringLiteral("current");
}

QString priorsName(ProtocolMatch::Priors p)
{
    switch (p) {
    case ProtocolMatch::Priors::Required: return QStringLiteral("required");
    case ProtocolMatch::Priors::Absent: return QStringLiteral("absent");
    case ProtocolMatch::Priors::Any: break;
    }
    return QStringLiteral("any");
}

void putIf(QJsonObject &o, const char *key, const QString &value)
{
    if (!value.isEmpty())
        o.insert(QLatin1String(key), value);
}

QStringList strings(const QJsonValue &v)
{
    QStringList out;
    if (v.isString())
        out << v.toString();
    for (const QJsonValue &x : v.toArray())
        out << x.toString();
    out.removeAll(QString());
    return out;
}

Error invalid(const QString &what)
{
    return Error(ErrorCode::InvalidArgument, what);
}

SeriesRule rule(SeriesRule::Study study, const QString &description, const QString &plane, const QString &thickness, const QString &window,
                const QString &viewPosition = QString())
{
    SeriesRule r;
    r.study = study;
    r.description = description;
    r.plane = plane;
    r.thickness = thickness;
    r.window = window;
    r.viewPosition = viewPosition;
    return r;
}

SeriesRule sameAs(int pane, const QString &window)
{
    SeriesRule r;
    r.study = SeriesRule::Study::Prior;
    r.sameAsPane = pane;
    r.window = window;
    return r;
}

} // namespace

bool operator==(const SeriesRule &a, const SeriesRule &b)
{
    return a.study == b.study && a.description == b.description && a.modality == b.modality && a.plane == b.plane
           && a.thickness == b.thickness && a.viewPosition == b.viewPosition && a.sameAsPane == b.sameAsPane && a.window == b.window;
}

bool operator==(const ProtocolMatch &a, const ProtocolMatch &b)
{
    return a.modalities == b.modalities && a.bodyPart == b.bodyPart && a.description == b.description && a.minSeries == b.minSeries
           && a.maxSeries == b.maxSeries && a.requiredSeries == b.requiredSeries && a.priors == b.priors;
}

bool operator==(const HangingProtocol &a, const HangingProtocol &b)
{
    return a.name == b.name && a.match == b.match && a.rows == b.rows && a.columns == b.columns && a.panes == b.panes
           && a.linkScroll == b.linkScroll && a.linkWindow == b.linkWindow && a.mpr == b.mpr;
}

QJsonObject HangingProtocol::toJson() const
{
    QJsonObject m;
    if (!match.modalities.isEmpty())
        m.insert(QStringLiteral("modality"), QJsonArray::fromStringList(match.modalities));
    putIf(m, "bodyPart", match.bodyPart);
    putIf(m, "description", match.description);
    if (match.minSeries > 0)
        m.insert(QStringLiteral("minSeries"), match.minSeries);
    if (match.maxSeries > 0)
        m.insert(QStringLiteral("maxSeries"), match.maxSeries);
    if (!match.requiredSeries.isEmpty())
        m.insert(QStringLiteral("requiredSeries"), QJsonArray::fromStringList(match.requiredSeries));
    m.insert(QStringLiteral("priors"), priorsName(match.priors));
    QJsonArray panesJson;
    for (const SeriesRule &r : panes) {
        QJsonObject series;
        putIf(series, "description", r.description);
        putIf(series, "modality", r.modality);
        putIf(series, "plane", r.plane);
        putIf(series, "thickness", r.thickness);
        putIf(series, "viewPosition", r.viewPosition);
        if (r.sameAsPane >= 0)
            series.insert(QStringLiteral("sameAs"), r.sameAsPane);
        QJsonObject pane{{QStringLiteral("study"), studyName(r.study)}, {QStringLiteral("series"), series}};
        putIf(pane, "window", r.window);
        panesJson.append(pane);
    }
    QJsonObject json{{QStringLiteral("name"), name},
                     {QStringLiteral("match"), m},
                     {QStringLiteral("layout"), QJsonArray{rows, columns}},
                     {QStringLiteral("link"), QJsonObject{{QStringLiteral("scroll"), linkScroll}, {QStringLiteral("window"), linkWindow}}},
                     {QStringLiteral("panes"), panesJson}};
    if (mpr)
        json.insert(QStringLiteral("mpr"), true);
    return json;
}

Result<HangingProtocol> HangingProtocol::fromJson(const QJsonObject &json)
{
    HangingProtocol p;
    p.name = json.value(QStringLiteral("name")).toString().trimmed();
    if (p.name.isEmpty())
        return invalid(QStringLiteral("a protocol has no name"));
    auto bad = [&p](const QString &what) { return invalid(QStringLiteral("protocol '%1': %2").arg(p.name, what)); };
    const QJsonObject m = json.value(QStringLiteral("match")).toObject();
    p.match.modalities = strings(m.value(QStringLiteral("modality")));
    p.match.bodyPart = m.value(QStringLiteral("bodyPart")).toString();
    p.match.description = m.value(QStringLiteral("description")).toString();
    p.match.minSeries = m.value(QStringLiteral("minSeries")).toInt();
    p.match.maxSeries = m.value(QStringLiteral("maxSeries")).toInt();
    p.match.requiredSeries = strings(m.value(QStringLiteral("requiredSeries")));
    const QString priors = m.value(QStringLiteral("priors")).toString(QStringLiteral("any"));
    if (priors == QLatin1String("required"))
        p.match.priors = ProtocolMatch::Priors::Required;
    else if (priors == QLatin1String("absent"))
        p.match.priors = ProtocolMatch::Priors::Absent;
    else if (priors != QLatin1String("any"))
        return bad(QStringLiteral("match.priors is '%1' (any, required or absent)").arg(priors));
    if (p.match.minSeries < 0 || p.match.maxSeries < 0 || (p.match.maxSeries > 0 && p.match.maxSeries < p.match.minSeries))
        return bad(QStringLiteral("match.minSeries and maxSeries must be 0 or more, min at most max"));
    const QJsonArray layout = json.value(QStringLiteral("layout")).toArray();
    p.rows = layout.size() == 2 ? layout.at(0).toInt() : 0;
    p.columns = layout.size() == 2 ? layout.at(1).toInt() : 0;
    if (p.rows < 1 || p.rows > 4 || p.columns < 1 || p.columns > 4)
        return bad(QStringLiteral("layout must be [rows, columns], each 1 to 4"));
    const QJsonObject link = json.value(QStringLiteral("link")).toObject();
    p.linkScroll = link.value(QStringLiteral("scroll")).toBool(true);
    p.linkWindow = link.value(QStringLiteral("window")).toBool(false);
    p.mpr = json.value(QStringLiteral("mpr")).toBool(false);
    const QJsonArray panes = json.value(QStringLiteral("panes")).toArray();
    if (panes.size() > p.rows * p.columns)
        return bad(QStringLiteral("%1 panes do not fit a %2 × %3 layout").arg(panes.size()).arg(p.rows).arg(p.columns));
    for (int i = 0; i < panes.size(); ++i) {
        const QJsonObject pane = panes.at(i).toObject();
        const QJsonObject series = pane.value(QStringLiteral("series")).toObject();
        SeriesRule r;
        const QString study = pane.value(QStringLiteral("study")).toString(QStringLiteral("current"));
        if (study != QLatin1String("current") && study != QLatin1String("prior"))
            return bad(QStringLiteral("pane %1: study is '%2' (current or prior)").arg(i).arg(study));
        r.study = study == QLatin1String("prior") ? SeriesRule::Study::Prior : SeriesRule::Study::Current;
        r.description = series.value(QStringLiteral("description")).toString();
        r.modality = series.value(QStringLiteral("modality")).toString();
        r.plane = series.value(QStringLiteral("plane")).toString().toLower();
        if (!r.plane.isEmpty() && r.plane != QLatin1String("axial") && r.plane != QLatin1String("coronal") && r.plane != QLatin1String("sagittal"))
            return bad(QStringLiteral("pane %1: plane is '%2' (axial, coronal or sagittal)").arg(i).arg(r.plane));
        r.thickness = series.value(QStringLiteral("thickness")).toString().remove(QLatin1Char(' '));
        if (!r.thickness.isEmpty() && r.thickness != QLatin1String("thin") && r.thickness != QLatin1String("thick")) {
            bool ok = false;
            if (r.thickness.startsWith(QLatin1String("<=")) || r.thickness.startsWith(QLatin1String(">=")))
                r.thickness.mid(2).toDouble(&ok);
            if (!ok)
                return bad(QStringLiteral("pane %1: thickness is '%2' (thin, thick, <=mm or >=mm)").arg(i).arg(r.thickness));
        }
        r.viewPosition = series.value(QStringLiteral("viewPosition")).toString();
        r.sameAsPane = series.value(QStringLiteral("sameAs")).toInt(-1);
        if (r.sameAsPane >= i || (series.contains(QStringLiteral("sameAs")) && r.sameAsPane < 0))
            return bad(QStringLiteral("pane %1: sameAs must name an earlier pane").arg(i));
        r.window = pane.value(QStringLiteral("window")).toString();
        if (!r.window.isEmpty() && !protocolWindow(r.window))
            return bad(QStringLiteral("pane %1: window '%2' is neither a preset (brain, lung, bone, abdomen, mediastinum) nor center/width").arg(i).arg(r.window));
        p.panes << r;
    }
    return p;
}

bool HangingPlan::usesPrior() const
{
    return std::any_of(panes.begin(), panes.end(), [](const PanePlacement &p) { return p.study == 1; });
}

ProtocolSet ProtocolSet::builtIn()
{
    using S = SeriesRule::Study;
    ProtocolSet set;
    HangingProtocol p;

    p = HangingProtocol();
    p.name = QStringLiteral("CT head with prior");
    p.match.modalities = {QStringLiteral("CT")};
    p.match.bodyPart = QStringLiteral("HEAD|BRAIN|SKULL");
    p.match.description = QStringLiteral("*HEAD*|*BRAIN*|*CRAN*");
    p.match.priors = ProtocolMatch::Priors::Required;
    p.rows = 1;
    p.columns = 2;
    p.panes = {rule(S::Current, QString(), QStringLiteral("axial"), QStringLiteral("thin"), QStringLiteral("brain")), sameAs(0, QStringLiteral("brain"))};
    p.linkScroll = true;
    p.linkWindow = true;
    set.protocols << p;

    p = HangingProtocol();
    p.name = QStringLiteral("CT head");
    p.match.modalities = {QStringLiteral("CT")};
    p.match.bodyPart = QStringLiteral("HEAD|BRAIN|SKULL");
    p.match.description = QStringLiteral("*HEAD*|*BRAIN*|*CRAN*");
    p.rows = 1;
    p.columns = 2;
    // Brain on the thick slices, bone on the thin ones (one series: the same in both, two windows).
    p.panes = {rule(S::Current, QString(), QStringLiteral("axial"), QStringLiteral("thick"), QStringLiteral("brain")),
               rule(S::Current, QString(), QStringLiteral("axial"), QStringLiteral("thin"), QStringLiteral("bone"))};
    set.protocols << p;

    p = HangingProtocol();
    p.name = QStringLiteral("CT chest with prior");
    p.match.modalities = {QStringLiteral("CT")};
    p.match.bodyPart = QStringLiteral("CHEST|THORAX|LUNG");
    p.match.description = QStringLiteral("*CHEST*|*THORA*|*LUNG*|*THX*");
    p.match.priors = ProtocolMatch::Priors::Required;
    p.rows = 2;
    p.columns = 2;
    p.panes = {rule(S::Current, QString(), QStringLiteral("axial"), QStringLiteral("thin"), QStringLiteral("lung")),
               rule(S::Current, QString(), QStringLiteral("axial"), QStringLiteral("thin"), QStringLiteral("mediastinum")),
               sameAs(0, QStringLiteral("lung")), sameAs(1, QStringLiteral("mediastinum"))};
    p.linkWindow = false;
    set.protocols << p;

    p = HangingProtocol();
    p.name = QStringLiteral("MR brain");
    p.match.modalities = {QStringLiteral("MR")};
    p.match.bodyPart = QStringLiteral("HEAD|BRAIN");
    p.match.description = QStringLiteral("*HEAD*|*BRAIN*|*NEURO*");
    p.rows = 2;
    p.columns = 2;
    p.panes = {rule(S::Current, QStringLiteral("*T2*"), QString(), QString(), QString()), rule(S::Current, QStringLiteral("*T1*"), QString(), QString(), QString()),
               rule(S::Current, QStringLiteral("*FLAIR*"), QString(), QString(), QString()),
               rule(S::Current, QStringLiteral("*DWI*|*DIFF*|*TRACE*"), QString(), QString(), QString())};
    set.protocols << p;

    p = HangingProtocol();
    p.name = QStringLiteral("Chest X-ray PA and lateral with prior");
    p.match.modalities = {QStringLiteral("CR"), QStringLiteral("DX")};
    p.match.bodyPart = QStringLiteral("CHEST|THORAX");
    p.match.description = QStringLiteral("*CHEST*|*THORA*|*CXR*");
    p.match.priors = ProtocolMatch::Priors::Required;
    p.rows = 2;
    p.columns = 2;
    p.panes = {rule(S::Current, QString(), QString(), QString(), QString(), QStringLiteral("PA|AP")),
               rule(S::Current, QString(), QString(), QString(), QString(), QStringLiteral("LAT")),
               rule(S::Prior, QString(), QString(), QString(), QString(), QStringLiteral("PA|AP")),
               rule(S::Prior, QString(), QString(), QString(), QString(), QStringLiteral("LAT"))};
    p.linkScroll = false;
    set.protocols << p;

    p = HangingProtocol();
    p.name = QStringLiteral("Chest X-ray PA and lateral");
    p.match.modalities = {QStringLiteral("CR"), QStringLiteral("DX")};
    p.match.bodyPart = QStringLiteral("CHEST|THORAX");
    p.match.description = QStringLiteral("*CHEST*|*THORA*|*CXR*");
    p.match.minSeries = 2;
    p.rows = 1;
    p.columns = 2;
    p.panes = {rule(S::Current, QString(), QString(), QString(), QString(), QStringLiteral("PA|AP")),
               rule(S::Current, QString(), QString(), QString(), QString(), QStringLiteral("LAT"))};
    p.linkScroll = false;
    set.protocols << p;
    return set;
}

Result<ProtocolSet> ProtocolSet::fromJson(const QByteArray &json)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError)
        return invalid(QStringLiteral("not JSON (%1 at byte %2)").arg(error.errorString()).arg(error.offset));
    const QJsonObject root = doc.object();
    if (root.value(QStringLiteral("format")).toString() != QLatin1String(kFormat))
        return invalid(QStringLiteral("not a hanging protocol file (format is not %1)").arg(QLatin1String(kFormat)));
    ProtocolSet set;
    for (const QJsonValue &v : root.value(QStringLiteral("protocols")).toArray()) {
        Result<HangingProtocol> p = HangingProtocol::fromJson(v.toObject());
        if (!p.isOk())
            return p.error();
        set.protocols << p.takeValue();
    }
    return set;
}

QByteArray ProtocolSet::toJson() const
{
    QJsonArray list;
    for (const HangingProtocol &p : protocols)
        list.append(p.toJson());
    return QJsonDocument(QJsonObject{{QStringLiteral("format"), QLatin1String(kFormat)}, {QStringLiteral("protocols"), list}}).toJson(QJsonDocument::Indented);
}

Result<ProtocolSet> ProtocolSet::load(const QString &path)
{
    const Result<UserFile> file = readUserFile(path);
    if (!file.isOk())
        return file.error();
    if (!file.value().exists)
        return builtIn();
    Result<ProtocolSet> set = fromJson(file.value().bytes);
    return set.isOk() ? set : Result<ProtocolSet>(inFile(path, set.error()));
}

Error ProtocolSet::save(const QString &path) const
{
    return writeUserFile(path, toJson());
}

} // namespace spectrum

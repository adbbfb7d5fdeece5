// SPDX-License-Identifier: Apache-2.0
// Hanging protocols at work: whether one matches a study, and which series goes in which pane.
#include "spectrum/stores/reading/hangingprotocol.h"

#include "spectrum/imaging/tools/measurements.h"

#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace spectrum {

namespace {

/// "LL", "RL", "LATERAL", "LEFT LATERAL" → "LAT"; others as they are, upper case.
QString viewCode(const QString &view)
{
    const QString v = view.simplified().toUpper();
    if (v == QLatin1String("LL") || v == QLatin1String("RL") || v.contains(QLatin1String("LAT")))
        return QStringLiteral("LAT");
    return v;
}

/// The plane a series lies in: from its Image Orientation when known, else from words in its description.
QString planeOf(const SeriesSummary &s, bool *fromGeometry = nullptr)
{
    if (fromGeometry)
        *fromGeometry = !s.plane.isEmpty();
    if (!s.plane.isEmpty())
        return s.plane.toLower();
    const QString d = s.description.toUpper();
    static const QRegularExpression axial(QStringLiteral("\\b(AX|AXIAL|TRA|TRANS|TRANSVERSE)\\b")), coronal(QStringLiteral("\\b(COR|CORONAL)\\b")),
        sagittal(QStringLiteral("\\b(SAG|SAGITTAL)\\b"));
    if (axial.match(d).hasMatch())
        return QStringLiteral("axial");
    if (coronal.match(d).hasMatch())
        return QStringLiteral("coronal");
    if (sagittal.match(d).hasMatch())
        return QStringLiteral("sagittal");
    return QString();
}

/// A series' thickness: recorded, else a number before "mm" in its description ("Axial 1.25 mm"); 0 unknown.
double thicknessOf(const SeriesSummary &s)
{
    if (s.sliceThickness > 0)
        return s.sliceThickness;
    static const QRegularExpression mm(QStringLiteral("(\\d+(?:\\.\\d+)?)\\s*mm"), QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch m = mm.match(s.description);
    return m.hasMatch() ? m.captured(1).toDouble() : 0.0;
}

QString bodyPartOf(const StudySummary &s)
{
    for (const SeriesSummary &series : s.series) {
        if (!series.bodyPart.isEmpty())
            return series.bodyPart;
    }
    return QString();
}

/// Whether series `s` meets a rule's hard conditions (description, modality, view position, thickness bound).
bool admits(const SeriesRule &r, const SeriesSummary &s)
{
    if (!r.description.isEmpty() && !protocolPatternMatches(r.description, s.description))
        return false;
    if (!r.modality.isEmpty() && r.modality.compare(s.modality, Qt::CaseInsensitive) != 0)
        return false;
    if (!r.viewPosition.isEmpty()) {
        // The recorded view position; without one, the description ("PA", "LAT").
        const QString view = !s.viewPosition.isEmpty() ? viewCode(s.viewPosition) : viewCode(s.description);
        bool any = false;
        for (const QString &alternative : r.viewPosition.split(QLatin1Char('|')))
            any = any || viewCode(alternative) == view || (s.viewPosition.isEmpty() && view.contains(viewCode(alternative)));
        if (!any)
            return false;
    }
    if (r.thickness.startsWith(QLatin1String("<=")) || r.thickness.startsWith(QLatin1String(">="))) {
        const double t = thicknessOf(s), bound = r.thickness.mid(2).toDouble();
        if (t <= 0 || (r.thickness.startsWith(QLatin1Char('<')) ? t > bound + 1e-6 : t < bound - 1e-6))
            return false;
    }
    if (!r.plane.isEmpty()) {
        const QString plane = planeOf(s);
        if (!plane.isEmpty() && plane != r.plane)
            return false;  // known to lie elsewhere
    }
    return true;
}

/// The series of `study` the rule picks (−1: none), by these in turn: not placed yet; a stack rather than a
/// single image (a scout) when a plane or thickness is asked; the plane known from geometry; the thinnest or
/// thickest as asked; the plane guessed from the description; the most images.
int pick(const SeriesRule &r, const StudySummary &study, const QSet<int> &used)
{
    using Score = std::tuple<int, int, int, double, int, int>;
    const bool stackRule = !r.plane.isEmpty() || !r.thickness.isEmpty();
    int best = -1;
    Score bestScore{};
    for (int i = 0; i < study.series.size(); ++i) {
        const SeriesSummary &s = study.series[i];
        if (s.instances.isEmpty() || isDocumentSeries(s) || !admits(r, s))
            continue;  // a report or key object list is no picture to hang
        bool geometry = false;
        const bool planeMatches = !r.plane.isEmpty() && planeOf(s, &geometry) == r.plane;
        const double t = thicknessOf(s);
        double thickness = 0;
        if (r.thickness == QLatin1String("thin"))
            thickness = t > 0 ? -t : -1e6;
        else if (r.thickness == QLatin1String("thick"))
            thickness = t > 0 ? t : -1e6;
        const Score score{used.contains(i) ? 0 : 1, stackRule && s.instances.size() < 2 ? 0 : 1, planeMatches && geometry ? 1 : 0, thickness,
                          planeMatches && !geometry ? 1 : 0, int(s.instances.size())};
        if (best < 0 || score > bestScore) {
            bestScore = score;
            best = i;
        }
    }
    return best;
}

/// The series of `other` most like `like`: the same description, else the same plane and modality with the
/// nearest thickness, else the same modality with the most images.
int mostLike(const SeriesSummary &like, const StudySummary &other)
{
    int best = -1;
    double bestScore = -1e18;
    for (int i = 0; i < other.series.size(); ++i) {
        const SeriesSummary &s = other.series[i];
        if (s.instances.isEmpty() || isDocumentSeries(s))
            continue;
        double score = 0;
        if (!like.description.isEmpty() && s.description.simplified().compare(like.description.simplified(), Qt::CaseInsensitive) == 0)
            score += 1e9;
        if (s.modality == like.modality)
            score += 1e8;
        if (!planeOf(like).isEmpty() && planeOf(s) == planeOf(like))
            score += 1e7;
        const double a = thicknessOf(s), b = thicknessOf(like);
        if (a > 0 && b > 0)
            score -= std::abs(a - b) * 1e4;
        score += std::min<double>(double(s.instances.size()), 9999);
        if (score > bestScore) {
            bestScore = score;
            best = i;
        }
    }
    return best;
}

} // namespace

bool protocolPatternMatches(const QString &pattern, const QString &text)
{
    for (const QString &alternative : pattern.split(QLatin1Char('|'))) {
        const QString p = alternative.trimmed();
        if (p.isEmpty())
            continue;
        const QRegularExpression re(QRegularExpression::wildcardToRegularExpression(p, QRegularExpression::UnanchoredWildcardConversion),
                                    QRegularExpression::CaseInsensitiveOption);
        const QRegularExpressionMatch m = re.match(text.simplified());
        if (m.hasMatch() && m.capturedStart() == 0 && m.capturedLength() == text.simplified().size())
            return true;
    }
    return false;
}

std::optional<std::pair<double, double>> protocolWindow(const QString &window)
{
    const QString w = window.trimmed();
    for (const WindowPreset &p : ctWindowPresets()) {
        if (p.name.compare(w, Qt::CaseInsensitive) == 0)
            return std::pair{p.center, p.width};
    }
    const QStringList parts = w.split(QLatin1Char('/'));
    bool okCenter = false, okWidth = false;
    const double center = parts.value(0).toDouble(&okCenter), width = parts.value(1).toDouble(&okWidth);
    if (parts.size() == 2 && okCenter && okWidth && width >= 1)
        return std::pair{center, width};
    return std::nullopt;
}

bool ProtocolSet::matches(int index, const StudySummary &study, bool hasPrior) const
{
    if (index < 0 || index >= protocols.size())
        return false;
    const ProtocolMatch &m = protocols[index].match;
    if (!m.modalities.isEmpty()
        && std::none_of(m.modalities.begin(), m.modalities.end(), [&study](const QString &x) { return study.modalities.contains(x, Qt::CaseInsensitive); }))
        return false;
    const bool part = !m.bodyPart.isEmpty() && protocolPatternMatches(m.bodyPart, bodyPartOf(study));
    const bool description = !m.description.isEmpty() && protocolPatternMatches(m.description, study.identity.studyDescription);
    if ((!m.bodyPart.isEmpty() || !m.description.isEmpty()) && !part && !description)
        return false;
    const int series = int(study.series.size());
    if (series < m.minSeries || (m.maxSeries > 0 && series > m.maxSeries))
        return false;
    for (const QString &required : m.requiredSeries) {
        if (std::none_of(study.series.begin(), study.series.end(), [&required](const SeriesSummary &s) { return protocolPatternMatches(required, s.description); }))
            return false;
    }
    if (m.priors == ProtocolMatch::Priors::Required && !hasPrior)
        return false;
    if (m.priors == ProtocolMatch::Priors::Absent && hasPrior)
        return false;
    return true;
}

QList<int> ProtocolSet::matching(const StudySummary &study, bool hasPrior) const
{
    QList<int> out;
    for (int i = 0; i < protocols.size(); ++i) {
        if (matches(i, study, hasPrior))
            out << i;
    }
    return out;
}

HangingPlan ProtocolSet::plan(int index, const StudySummary &study, const StudySummary *prior) const
{
    HangingPlan plan;
    if (index < 0 || index >= protocols.size())
        return plan;
    const HangingProtocol &p = protocols[index];
    plan.protocol = index;
    plan.name = p.name;
    plan.rows = p.rows;
    plan.columns = p.columns;
    plan.linkScroll = p.linkScroll;
    plan.linkWindow = p.linkWindow;
    plan.mpr = p.mpr;
    QSet<int> used[2];
    const StudySummary *studies[2] = {&study, prior};
    for (int i = 0; i < p.rows * p.columns; ++i) {
        PanePlacement placed;
        if (i < p.panes.size()) {
            const SeriesRule &r = p.panes[i];
            placed.window = r.window;
            const int which = r.study == SeriesRule::Study::Prior && prior ? 1 : 0;
            if (r.study == SeriesRule::Study::Prior && !prior) {
                placed.study = -1;  // no prior: filled below with what is left of the current study
            } else if (r.sameAsPane >= 0 && r.sameAsPane < plan.panes.size() && plan.panes[r.sameAsPane].study >= 0) {
                const PanePlacement &like = plan.panes[r.sameAsPane];
                placed.study = which;
                placed.series = mostLike(studies[like.study]->series[like.series], *studies[which]);
            } else {
                placed.study = which;
                placed.series = pick(r, *studies[which], used[which]);
            }
            if (placed.series < 0)
                placed.study = -1;
        }
        if (placed.study < 0) {
            // What the rules left: the next series of the current study not on screen yet.
            for (int s = 0; s < study.series.size() && placed.study < 0; ++s) {
                if (!used[0].contains(s) && !study.series[s].instances.isEmpty() && !isDocumentSeries(study.series[s])) {
                    placed.study = 0;
                    placed.series = s;
                }
            }
        }
        if (placed.study >= 0)
            used[placed.study].insert(placed.series);
        plan.panes << placed;
    }
    // Panes nothing was found for are left out: the smallest grid of the same shape that holds the rest.
    while (!plan.panes.isEmpty() && plan.panes.last().study < 0)
        plan.panes.removeLast();
    const int filled = std::max(1, int(plan.panes.size()));
    while (plan.rows * plan.columns > filled) {
        if (plan.columns >= plan.rows && (plan.columns - 1) * plan.rows >= filled)
            --plan.columns;
        else if ((plan.rows - 1) * plan.columns >= filled)
            --plan.rows;
        else
            break;
    }
    return plan;
}

HangingPlan ProtocolSet::planFor(const StudySummary &study, const StudySummary *prior) const
{
    const QList<int> candidates = matching(study, prior != nullptr);
    if (!candidates.isEmpty())
        return plan(candidates.first(), study, prior);
    HangingPlan plain;  // one pane, the first series of images: the reader lays it out
    const auto images = std::find_if(study.series.begin(), study.series.end(), [](const SeriesSummary &s) { return !isDocumentSeries(s); });
    if (!study.series.isEmpty())
        plain.panes << PanePlacement{0, images == study.series.end() ? 0 : int(images - study.series.begin()), QString()};
    plain.linkScroll = false;
    return plain;
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Hanging protocols: how a study is laid out on screen before the reader touches it. A protocol matches a study
// (modality, body part or study description, how many series and which, whether a prior is there) and says the
// layout, which series goes in which pane — by description, plane, slice thickness, view position, or "the same
// series of the most recent prior" — the window each pane opens with, and what is linked.
//
// Protocols are tried in order; the first that matches is applied, the next and previous matching ones are a key
// away. Built-in ones cover CT head, CT chest with prior, MR brain and chest radiographs (PA and lateral) with
// prior; the reader's own are saved (with the built-ins, in their order) in a JSON file of their own
// (docs/HANGING-PROTOCOLS.md describes it).

#include "spectrum/core/result.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace spectrum {

/// Which series goes in a pane.
struct SeriesRule
{
    enum class Study { Current, Prior };
    Study study = Study::Current;  ///< Prior: the most recent comparable prior
    QString description;           ///< series description, wildcards * ? and alternatives a|b, any case; empty: any
    QString modality;              ///< empty: any
    QString plane;                 ///< "axial", "coronal", "sagittal"; empty: any
    QString thickness;             ///< "thin" (the thinnest), "thick" (the thickest), or "<=2.5", ">=5" (mm); empty: any
    QString viewPosition;          ///< "PA", "AP", "LAT"…; empty: any
    int sameAsPane = -1;           ///< ≥ 0: the series of this study most like the one placed in that pane
    /// The window the pane opens with: a preset's name (windowlevel.h: brain, lung, bone, abdomen,
    /// mediastinum) or "center/width" ("40/80"); empty: the image's own.
    QString window;

    friend bool operator==(const SeriesRule &a, const SeriesRule &b);
};

/// When a protocol applies.
struct ProtocolMatch
{
    QStringList modalities;        ///< the study holds one of these; empty: any
    /// Body part (Body Part Examined of a series) and study description, wildcard patterns. With both, either
    /// matching is enough — archives record one or the other; with one, it must match.
    QString bodyPart;
    QString description;
    int minSeries = 0;             ///< the study has at least this many series
    int maxSeries = 0;             ///< … and at most this many (0: no limit)
    QStringList requiredSeries;    ///< each pattern matches some series description
    enum class Priors { Any, Required, Absent };
    Priors priors = Priors::Any;

    friend bool operator==(const ProtocolMatch &a, const ProtocolMatch &b);
};

struct HangingProtocol
{
    QString name;
    ProtocolMatch match;
    int rows = 1;
    int columns = 1;
    QList<SeriesRule> panes;       ///< row-major; panes beyond it get the series not yet placed
    bool linkScroll = true;
    bool linkWindow = false;
    /// The first pane's series in MPR (axial, coronal and sagittal planes with a crosshair) instead of the grid
    /// ("mpr": true in the file).
    bool mpr = false;

    QJsonObject toJson() const;
    /// InvalidArgument saying what is wrong (and where) for a protocol that cannot be used.
    static Result<HangingProtocol> fromJson(const QJsonObject &json);
    friend bool operator==(const HangingProtocol &a, const HangingProtocol &b);
};

/// One pane of a plan: which study (0 the current, 1 the prior, −1 nothing) and series, and its window.
struct PanePlacement
{
    int study = -1;
    int series = -1;
    QString window;                ///< as SeriesRule::window
};

/// A protocol applied to one study (and its prior): what the viewer lays out.
struct HangingPlan
{
    int protocol = -1;             ///< index in the set
    QString name;
    int rows = 1;
    int columns = 1;
    QList<PanePlacement> panes;
    bool linkScroll = true;
    bool linkWindow = false;
    bool mpr = false;              ///< the first pane's series shown in MPR
    bool usesPrior() const;
};

class ProtocolSet
{
public:
    /// CT head (with and without prior), CT chest with prior, MR brain, chest PA + lateral (with and without prior).
    static ProtocolSet builtIn();
    /// The protocols of a file written by save(); InvalidArgument naming the protocol and the problem.
    static Result<ProtocolSet> fromJson(const QByteArray &json);
    QByteArray toJson() const;
    /// The file at `path`, or the built-ins when there is none; an error (and nothing) for a broken file.
    static Result<ProtocolSet> load(const QString &path);
    /// Written whole, atomically.
    Error save(const QString &path) const;

    QList<HangingProtocol> protocols;

    bool matches(int index, const StudySummary &study, bool hasPrior) const;
    /// The protocols that match, in order.
    QList<int> matching(const StudySummary &study, bool hasPrior) const;
    /// Protocol `index` placed on `study` and (when the protocol wants one and it is given) `prior`.
    HangingPlan plan(int index, const StudySummary &study, const StudySummary *prior) const;
    /// The first matching protocol's plan; when none matches, one pane with the first series.
    HangingPlan planFor(const StudySummary &study, const StudySummary *prior) const;
};

/// Whether `text` matches a pattern of alternatives ("*HEAD*|*BRAIN*"), wildcards * and ?, any case.
bool protocolPatternMatches(const QString &pattern, const QString &text);
/// A protocol window ("brain", "40/80") as a window; nullopt when it names none.
std::optional<std::pair<double, double>> protocolWindow(const QString &window);

} // namespace spectrum

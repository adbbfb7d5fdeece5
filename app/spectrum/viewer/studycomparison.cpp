// SPDX-License-Identifier: Apache-2.0
#include "viewer/studycomparison.h"
#include "viewer/studyviewer.h"
#include "browser/priorspanel.h"

#include "spectrum/stores/reading/priorsearch.h"
#include "spectrum/stores/reading/studystreamer.h"

#include <QDate>

#include <algorithm>

namespace spectrum {

namespace {

QString normalised(const QString &s) { return s.simplified().toUpper(); }

/// "1 year earlier", "3 months earlier", "12 days later".
QString ageBetween(const QString &fromDicomDate, const QString &toDicomDate)
{
    const QDate from = QDate::fromString(fromDicomDate, QStringLiteral("yyyyMMdd")), to = QDate::fromString(toDicomDate, QStringLiteral("yyyyMMdd"));
    if (!from.isValid() || !to.isValid())
        return QString();
    const qint64 days = from.daysTo(to);
    const qint64 n = std::abs(days);
    if (n == 0)
        return QObject::tr("the same day");
    const QString when = days >= 0 ? QObject::tr("earlier") : QObject::tr("later");
    auto count = [](qint64 k, const QString &one, const QString &many) { return k == 1 ? one : many.arg(k); };
    if (n >= 330)  // "1 year" from eleven months on, as a reader says it
        return count(std::max<qint64>(1, qRound64(n / 365.25)), QObject::tr("1 year"), QObject::tr("%1 years")) + QLatin1Char(' ') + when;
    if (n >= 45)
        return count(qRound64(n / 30.44), QObject::tr("1 month"), QObject::tr("%1 months")) + QLatin1Char(' ') + when;
    return count(n, QObject::tr("1 day"), QObject::tr("%1 days")) + QLatin1Char(' ') + when;
}

} // namespace

StudyComparison::StudyComparison(StudyViewer *viewer) : QObject(viewer), m_viewer(viewer) {}

StudyComparison::~StudyComparison() = default;

bool StudyComparison::find(const QString &studyKey, const StudySummary **study, StudyStreamer **streamer) const
{
    for (const auto &o : m_open) {
        if (m_viewer->keyOf(&o->study) == studyKey) {
            *study = &o->study;
            *streamer = o->streamer;
            return true;
        }
    }
    return false;
}

const StudySummary &StudyComparison::study(int i) const
{
    return m_open.at(size_t(i))->study;
}

StudyStreamer *StudyComparison::streamerOf(const SeriesPane *pane) const
{
    if (pane->study() == &m_viewer->m_study)
        return m_viewer->m_streamer;
    for (const auto &o : m_open) {
        if (&o->study == pane->study())
            return o->streamer;
    }
    return nullptr;
}

bool StudyComparison::add(const StudySummary &study, StudyStreamer *streamer)
{
    const QString key = PriorsPanel::studyKey(study.identity);
    const QString why = key == m_viewer->keyOf(&m_viewer->m_study) ? tr("it is the study being read") : patientMismatch(m_viewer->m_study.identity, study.identity);
    if (!why.isEmpty()) {
        if (streamer)
            streamer->deleteLater();
        Q_EMIT m_viewer->errorOccurred(Error(ErrorCode::InvalidArgument, tr("study %1 is not opened beside this one: %2").arg(study.identity.studyInstanceUid, why)));
        return false;
    }
    for (const auto &o : m_open) {
        if (m_viewer->keyOf(&o->study) == key) {
            if (streamer && streamer != o->streamer)
                streamer->deleteLater();  // open already
            return true;
        }
    }
    auto open = std::make_unique<OpenStudy>();
    open->study = study;
    open->streamer = streamer;
    if (streamer) {
        streamer->setParent(m_viewer);  // it fetches for this viewer, and stops with it
        m_viewer->wireStreamer(streamer);
    }
    m_viewer->m_priors->setOpened(study);
    m_open.push_back(std::move(open));
    Q_EMIT opened(study);
    return true;
}

bool StudyComparison::update(const StudySummary &whole)
{
    const QString key = PriorsPanel::studyKey(whole.identity);
    OpenStudy *open = nullptr;
    for (const auto &o : m_open) {
        if (o->study.identity.studyInstanceUid == whole.identity.studyInstanceUid)
            open = o.get();
    }
    if (!open)
        return false;
    const QString why = m_viewer->keyOf(&open->study) != key ? tr("its listing names Patient ID '%1', its first look '%2'").arg(whole.identity.patientId, open->study.identity.patientId)
                                                   : patientMismatch(m_viewer->m_study.identity, whole.identity);
    if (!why.isEmpty()) {
        Q_EMIT m_viewer->errorOccurred(Error(ErrorCode::Corrupt, tr("study %1 is not shown beside this one: %2").arg(whole.identity.studyInstanceUid, why)));
        close(whole.identity.studyInstanceUid, tr("not shown: the archive's answers about it disagree on the patient (%1)").arg(why));
        return false;
    }
    // Where each of its panes is, by instance, to find it again in the whole list.
    QHash<SeriesPane *, QString> shown;
    for (SeriesPane *p : std::as_const(m_viewer->m_panes)) {
        if (p->study() == &open->study && p->seriesIndex() >= 0 && p->sliceIndex() >= 0)
            shown.insert(p, open->study.series[p->seriesIndex()].instances[p->sliceIndex()].key);
    }
    open->study = whole;  // the same object: the panes' pointers stay good
    for (auto it = shown.cbegin(); it != shown.cend(); ++it) {
        int series = whole.series.isEmpty() ? -1 : 0, slice = -1;
        for (int s = 0; s < whole.series.size() && slice < 0; ++s) {
            for (int k = 0; k < whole.series[s].instances.size(); ++k) {
                if (whole.series[s].instances[k].key == it.value()) {
                    series = s;
                    slice = k;
                    break;
                }
            }
        }
        it.key()->relocate(series, slice);
    }
    m_viewer->m_priors->setOpened(whole);
    updateLabels();
    // The stream fetches next where the study is looked at in its whole numbering.
    if (open->streamer) {
        SeriesPane *focus = m_viewer->m_active && m_viewer->m_active->study() == &open->study ? m_viewer->m_active : nullptr;
        for (SeriesPane *p : std::as_const(m_viewer->m_panes)) {
            if (!focus && p->study() == &open->study)
                focus = p;  // the active pane is the current study's: the prior's first pane
        }
        if (focus && focus->seriesIndex() >= 0)
            open->streamer->setFocus(focus->seriesIndex(), focus->sliceIndex());
    }
    m_viewer->m_links->follow();
    return true;
}

void StudyComparison::close(const QString &studyUid, const QString &why)
{
    const auto it = std::find_if(m_open.begin(), m_open.end(), [&](const auto &o) { return o->study.identity.studyInstanceUid == studyUid; });
    if (it == m_open.end())
        return;
    OpenStudy *open = it->get();
    if (open->streamer)
        open->streamer->stop();  // nothing more of it is fetched
    // Its panes show the current study again: new panes, the old ones deleted later (they point at its list,
    // which is kept until the viewer goes).
    for (int i = 0; i < m_viewer->m_panes.size(); ++i) {
        if (m_viewer->m_panes[i]->study() == &open->study)
            m_viewer->showSeriesOf(m_viewer->m_panes[i], m_viewer->keyOf(&m_viewer->m_study), m_viewer->m_study.series.isEmpty() ? -1 : 0);
    }
    for (int i = 0; i < m_viewer->m_panes.size(); ++i) {  // a study without series: the panes stay, emptied
        if (m_viewer->m_panes[i]->study() == &open->study)
            m_viewer->m_panes[i]->relocate(-1, -1);
    }
    if (open->streamer) {
        disconnect(open->streamer, nullptr, m_viewer, nullptr);
        open->streamer->deleteLater();  // after the panes that hold it (deleted later too, posted first)
        open->streamer = nullptr;
    }
    m_viewer->m_links->forgetStudy(m_viewer->keyOf(&open->study));
    m_viewer->m_priors->setClosed(studyUid, why);
    m_closed.push_back(std::move(*it));
    m_open.erase(it);
    updateLabels();
}

bool StudyComparison::openBeside(const StudySummary &study, StudyStreamer *streamer)
{
    if (!add(study, streamer))
        return false;
    const QString key = PriorsPanel::studyKey(study.identity);
    const StudySummary &other = std::find_if(m_open.begin(), m_open.end(), [&](const auto &o) { return m_viewer->keyOf(&o->study) == key; })->get()->study;
    if (other.series.isEmpty())
        return true;
    if (m_viewer->m_panes.size() < 2)
        m_viewer->setGrid(1, 2);
    // The series most like the one in the active pane.
    const SeriesSummary *here = m_viewer->m_active && m_viewer->m_active->seriesIndex() >= 0 ? &m_viewer->m_active->study()->series[m_viewer->m_active->seriesIndex()] : nullptr;
    int best = 0, bestScore = -1;
    for (int s = 0; s < other.series.size(); ++s) {
        const SeriesSummary &c = other.series[s];
        int score = 0;
        if (here && !here->description.isEmpty() && normalised(c.description) == normalised(here->description))
            score += 1000000;
        if (here && c.modality == here->modality)
            score += 100000 + std::min<int>(int(c.instances.size()), 99999);
        if (score > bestScore) {
            bestScore = score;
            best = s;
        }
    }
    // Where it goes: a pane showing it already stays as it is; else the first pane after the active one that
    // does not show the current study, else the last — never the reader's own pane of the current study.
    for (SeriesPane *p : std::as_const(m_viewer->m_panes)) {
        if (p->study() == &other) {
            m_viewer->setActivePane(p);
            return true;
        }
    }
    const int from = m_viewer->m_active ? int(m_viewer->m_panes.indexOf(m_viewer->m_active)) : 0;
    int at = -1;
    for (int k = 1; k <= m_viewer->m_panes.size() && at < 0; ++k) {
        const int i = int((from + k) % m_viewer->m_panes.size());
        if (m_viewer->m_panes[i]->study() != &m_viewer->m_study)
            at = i;
    }
    if (at < 0)
        at = m_viewer->m_panes[m_viewer->m_panes.size() - 1] == m_viewer->m_active ? int(m_viewer->m_panes.size()) - 2 : int(m_viewer->m_panes.size()) - 1;
    SeriesPane *reader = m_viewer->m_active;
    m_viewer->m_placing = true;
    const bool shown = m_viewer->showSeriesOf(m_viewer->m_panes[at], key, best);
    m_viewer->m_placing = false;
    if (shown && reader && m_viewer->m_panes.contains(reader))
        m_viewer->m_links->follow(reader);  // the new pane at the level the reader is at (it opens there, not at its middle first)
    for (SeriesPane *p : std::as_const(m_viewer->m_panes))
        p->releaseLoads();  // and only then loads
    return shown;
}

void StudyComparison::updateLabels()
{
    for (SeriesPane *p : std::as_const(m_viewer->m_panes)) {
        if (m_open.empty()) {
            p->setComparisonLabel(QString(), false);
            continue;
        }
        const DicomIdentity &id = p->study()->identity;
        if (p->study() == &m_viewer->m_study) {
            p->setComparisonLabel(tr("CURRENT  %1").arg(DicomIdentity::displayDate(id.studyDate)), false);
            continue;
        }
        if (id.studyDate.isEmpty() || m_viewer->m_study.identity.studyDate.isEmpty()) {
            p->setComparisonLabel(tr("OTHER STUDY  date unknown"), false);  // neither earlier nor later is known
            continue;
        }
        const bool earlier = id.studyDate + id.studyTime < m_viewer->m_study.identity.studyDate + m_viewer->m_study.identity.studyTime;
        const QString age = ageBetween(id.studyDate, m_viewer->m_study.identity.studyDate);
        p->setComparisonLabel(tr("%1  %2%3").arg(earlier ? tr("PRIOR") : tr("LATER"), DicomIdentity::displayDate(id.studyDate),
                                                 age.isEmpty() ? QString() : tr(" (%1)").arg(age)),
                              earlier);
    }
    m_viewer->updateModeText();
}

} // namespace spectrum

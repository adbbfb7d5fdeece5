// SPDX-License-Identifier: Apache-2.0
#pragma once
// SavedSearch: a study search the reader (or the hospital's IT) keeps by name — "Today's CT at the main PACS" —
// with what to do with what it lists: nothing, prefetch each study's comparable priors, or the studies and their
// priors; run by hand from the browser, every N minutes while the workstation runs, or headless with
// `spectrum-cli prefetch --saved NAME` (a worklist filled before the reader sits down: the seeds' batch workflow).
//
// Dates are kept relative ("today", "last 7 days") and resolved when the search runs, so a search saved on
// Monday finds Tuesday's studies on Tuesday. Kept in a JSON file of their own beside the workstation's settings
// (docs/SAVED-SEARCHES.md); a broken file is an error naming the search and the field, never half read.

#include "spectrum/core/dicomquery.h"
#include "spectrum/core/result.h"

#include <QDate>
#include <QList>
#include <QString>
#include <QStringList>

namespace spectrum {

/// A study date period, relative to the day the search runs or fixed.
struct DatePeriod
{
    enum Kind { Any, Today, Yesterday, LastDays, Between };
    Kind kind = Any;
    int days = 7;        ///< LastDays: today and the days before it, this many in all (1…3660)
    QDate from, to;      ///< Between: inclusive; a null end stays open

    /// "any", "today", "yesterday", "last 7 days", "20240101-20240131" (either end may be left out).
    QString toText() const;
    /// The text toText() writes; InvalidArgument saying what is accepted.
    static Result<DatePeriod> fromText(const QString &text);
    /// The range on `today`: (from, to), null dates for open ends.
    std::pair<QDate, QDate> resolve(const QDate &today) const;
    bool operator==(const DatePeriod &o) const;
};

struct SavedSearch
{
    /// What a run does with the studies it lists (those the archives agree on: never across a patient conflict).
    enum class Prefetch { None, Priors, StudiesAndPriors };

    QString name;            ///< unique in the file, as the reader sees it
    QString patientName;     ///< wildcards * and ?
    QString patientId;
    QString accessionNumber;
    QString modality;
    QString description;     ///< study description, wildcards
    DatePeriod dates;
    QStringList stores;      ///< the stores asked; empty: every configured archive
    Prefetch prefetch = Prefetch::None;
    int priorsPerStudy = 1;  ///< comparable priors per study, most recent first (1…10)
    int everyMinutes = 0;    ///< run again this often while the workstation runs (0: only when asked; else 5…1440)

    /// The query on `today`.
    DicomQuery query(const QDate &today = QDate::currentDate()) const;
    /// InvalidArgument naming the field: no name, an unbounded search (nothing narrows it), odd numbers, a
    /// query the archives cannot answer.
    Error validate() const;
    bool operator==(const SavedSearch &o) const;

    static QString prefetchText(Prefetch p);
};

class SavedSearches
{
public:
    QList<SavedSearch> searches;

    /// The searches of a file written by save(); InvalidArgument naming the search and the problem.
    static Result<SavedSearches> fromJson(const QByteArray &json);
    QByteArray toJson() const;
    /// The file at `path` (none there: no searches); an error, and nothing, for a broken file.
    static Result<SavedSearches> load(const QString &path);
    /// Written whole, atomically.
    Error save(const QString &path) const;
    /// Where the workstation keeps them: beside its settings (…/Spectrum/saved-searches.json).
    static QString defaultPath();

    const SavedSearch *find(const QString &name) const;
    /// Adds `search`, or replaces the one of that name; InvalidArgument when it is not valid.
    Error put(const SavedSearch &search);
    bool remove(const QString &name);
};

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/reading/savedsearch.h"

#include "reading/userfile.h"

#include "spectrum/core/settings.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

namespace spectrum {

namespace {

constexpr char kFormat[] = "spectrum-saved-searches/1";
constexpr int kMaxSearches = 200;
constexpr int kMaxDays = 3660;

Error invalid(const QString &what)
{
    return Error(ErrorCode::InvalidArgument, what);
}

QDate dicomDate(const QString &text)
{
    return QDate::fromString(text, QStringLiteral("yyyyMMdd"));
}

} // namespace

// ---- DatePeriod ----

QString DatePeriod::toText() const
{
    switch (kind) {
    case Any: return QStringLiteral("any");
    case Today: return QStringLiteral("today");
    case Yesterday: return QStringLiteral("yesterday");
    case LastDays: return QStringLiteral("last %1 days").arg(days);
    case Between:
        return (from.isValid() ? from.toString(QStringLiteral("yyyyMMdd")) : QString()) + QLatin1Char('-')
               + (to.isValid() ? to.toString(QStringLiteral("yyyyMMdd")) : QString());
    }
    return QString();
}

Result<DatePeriod> DatePeriod::fromText(const QString &text)
{
    const QString t = text.trimmed().toLower();
    DatePeriod p;
    if (t.isEmpty() || t == QLatin1String("any"))
        return p;
    if (t == QLatin1String("today")) {
        p.kind = Today;
        return p;
    }
    if (t == QLatin1String("yesterday")) {
        p.kind = Yesterday;
        return p;
    }
    static const QRegularExpression lastDays(QStringLiteral("^last (\\d{1,4}) days?$"));
    if (const QRegularExpressionMatch m = lastDays.match(t); m.hasMatch()) {
        p.kind = LastDays;
        p.days = m.captured(1).toInt();
        if (p.days < 1 || p.days > kMaxDays)
            return invalid(QStringLiteral("\"%1\": the last 1 to %2 days").arg(text).arg(kMaxDays));
        return p;
    }
    static const QRegularExpression range(QStringLiteral("^(\\d{8})?-(\\d{8})?$"));
    if (const QRegularExpressionMatch m = range.match(t); m.hasMatch() && (m.capturedLength(1) > 0 || m.capturedLength(2) > 0)) {
        p.kind = Between;
        p.from = dicomDate(m.captured(1));
        p.to = dicomDate(m.captured(2));
        if ((m.capturedLength(1) > 0 && !p.from.isValid()) || (m.capturedLength(2) > 0 && !p.to.isValid()))
            return invalid(QStringLiteral("\"%1\" is not a date range of real days").arg(text));
        if (p.from.isValid() && p.to.isValid() && p.from > p.to)
            return invalid(QStringLiteral("\"%1\" ends before it begins").arg(text));
        return p;
    }
    return invalid(QStringLiteral("\"%1\" is not a period: any, today, yesterday, last N days, or YYYYMMDD-YYYYMMDD").arg(text));
}

std::pair<QDate, QDate> DatePeriod::resolve(const QDate &today) const
{
    switch (kind) {
    case Any: return {};
    case Today: return {today, today};
    case Yesterday: return {today.addDays(-1), today.addDays(-1)};
    case LastDays: return {today.addDays(-(days - 1)), today};
    case Between: return {from, to};
    }
    return {};
}

bool DatePeriod::operator==(const DatePeriod &o) const
{
    return kind == o.kind && (kind != LastDays || days == o.days) && (kind != Between || (from == o.from && to == o.to));
}

// ---- SavedSearch ----

DicomQuery SavedSearch::query(const QDate &today) const
{
    DicomQuery q;
    q.patientName = patientName;
    q.patientId = patientId;
    q.accessionNumber = accessionNumber;
    q.modality = modality;
    q.description = description;
    std::tie(q.dateFrom, q.dateTo) = dates.resolve(today);
    return q;
}

Error SavedSearch::validate() const
{
    if (name.trimmed().isEmpty())
        return invalid(QStringLiteral("a saved search needs a name"));
    if (name.size() > 120)
        return invalid(QStringLiteral("the name \"%1…\" is longer than 120 characters").arg(name.left(20)));
    if (patientName.isEmpty() && patientId.isEmpty() && accessionNumber.isEmpty() && modality.isEmpty() && description.isEmpty()
        && dates.kind == DatePeriod::Any)
        return invalid(QStringLiteral("\"%1\" would list every study of every archive: give it a date, a modality, a patient…").arg(name));
    if (priorsPerStudy < 1 || priorsPerStudy > 10)
        return invalid(QStringLiteral("\"%1\": priors per study is 1 to 10, not %2").arg(name).arg(priorsPerStudy));
    if (everyMinutes != 0 && (everyMinutes < 5 || everyMinutes > 1440))
        return invalid(QStringLiteral("\"%1\": it runs every 5 to 1440 minutes (or 0: when asked), not %2").arg(name).arg(everyMinutes));
    for (const QString &s : stores) {
        if (s.trimmed().isEmpty())
            return invalid(QStringLiteral("\"%1\": an empty store name").arg(name));
    }
    if (Error e = query().validate(); e.isError())
        return invalid(QStringLiteral("\"%1\": %2").arg(name, e.message()));
    return Error();
}

bool SavedSearch::operator==(const SavedSearch &o) const
{
    return name == o.name && patientName == o.patientName && patientId == o.patientId && accessionNumber == o.accessionNumber && modality == o.modality
           && description == o.description && dates == o.dates && stores == o.stores && prefetch == o.prefetch && priorsPerStudy == o.priorsPerStudy
           && everyMinutes == o.everyMinutes;
}

QString SavedSearch::prefetchText(Prefetch p)
{
    switch (p) {
    case Prefetch::None: return QStringLiteral("none");
    case Prefetch::Priors: return QStringLiteral("priors");
    case Prefetch::StudiesAndPriors: return QStringLiteral("studies and priors");
    }
    return QString();
}

// ---- SavedSearches ----

Result<SavedSearches> SavedSearches::fromJson(const QByteArray &json)
{
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (doc.isNull())
        return invalid(QStringLiteral("not JSON: %1 at byte %2").arg(parseError.errorString()).arg(parseError.offset));
    if (!doc.isObject())
        return invalid(QStringLiteral("not an object with \"searches\""));
    const QJsonObject root = doc.object();
    const QString format = root.value(QLatin1String("format")).toString();
    if (format != QLatin1String(kFormat))
        return invalid(QStringLiteral("the format is \"%1\", not \"%2\" (a newer workstation's file, or not a file of saved searches)")
                           .arg(format, QLatin1String(kFormat)));
    const QJsonValue list = root.value(QLatin1String("searches"));
    if (!list.isArray())
        return invalid(QStringLiteral("\"searches\" is not a list"));
    if (list.toArray().size() > kMaxSearches)
        return invalid(QStringLiteral("more than %1 searches").arg(kMaxSearches));
    static const QStringList known{QStringLiteral("name"), QStringLiteral("patientName"), QStringLiteral("patientId"), QStringLiteral("accession"),
                                   QStringLiteral("modality"), QStringLiteral("description"), QStringLiteral("dates"), QStringLiteral("stores"),
                                   QStringLiteral("prefetch"), QStringLiteral("priors"), QStringLiteral("everyMinutes")};
    SavedSearches out;
    int n = 0;
    for (const QJsonValue &v : list.toArray()) {
        ++n;
        if (!v.isObject())
            return invalid(QStringLiteral("search %1 is not an object").arg(n));
        const QJsonObject o = v.toObject();
        const QString label = o.value(QLatin1String("name")).isString() ? QStringLiteral("\"%1\"").arg(o.value(QLatin1String("name")).toString())
                                                                         : QStringLiteral("search %1").arg(n);
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (!known.contains(it.key()))
                return invalid(QStringLiteral("%1: unknown field \"%2\"").arg(label, it.key()));
        }
        SavedSearch s;
        for (const auto &[key, field] : {std::pair{"name", &SavedSearch::name}, std::pair{"patientName", &SavedSearch::patientName},
                                         std::pair{"patientId", &SavedSearch::patientId}, std::pair{"accession", &SavedSearch::accessionNumber},
                                         std::pair{"modality", &SavedSearch::modality}, std::pair{"description", &SavedSearch::description}}) {
            const QJsonValue f = o.value(QLatin1String(key));
            if (!f.isUndefined() && !f.isString())
                return invalid(QStringLiteral("%1: \"%2\" is not text").arg(label, QLatin1String(key)));
            s.*field = f.toString();
        }
        const QJsonValue dates = o.value(QLatin1String("dates"));
        if (!dates.isUndefined() && !dates.isString())
            return invalid(QStringLiteral("%1: \"dates\" is not text").arg(label));
        const Result<DatePeriod> period = DatePeriod::fromText(dates.toString());
        if (!period.isOk())
            return invalid(QStringLiteral("%1: dates %2").arg(label, period.error().message()));
        s.dates = period.value();
        const QJsonValue stores = o.value(QLatin1String("stores"));
        if (!stores.isUndefined() && !stores.isArray())
            return invalid(QStringLiteral("%1: \"stores\" is not a list").arg(label));
        for (const QJsonValue &st : stores.toArray()) {
            if (!st.isString())
                return invalid(QStringLiteral("%1: a store is not named by text").arg(label));
            s.stores << st.toString();
        }
        const QJsonValue prefetch = o.value(QLatin1String("prefetch"));
        const QString p = prefetch.toString(QStringLiteral("none"));
        if (!prefetch.isUndefined() && !prefetch.isString())
            return invalid(QStringLiteral("%1: \"prefetch\" is not text").arg(label));
        if (p == SavedSearch::prefetchText(SavedSearch::Prefetch::None))
            s.prefetch = SavedSearch::Prefetch::None;
        else if (p == SavedSearch::prefetchText(SavedSearch::Prefetch::Priors))
            s.prefetch = SavedSearch::Prefetch::Priors;
        else if (p == SavedSearch::prefetchText(SavedSearch::Prefetch::StudiesAndPriors))
            s.prefetch = SavedSearch::Prefetch::StudiesAndPriors;
        else
            return invalid(QStringLiteral("%1: prefetch \"%2\" is none, priors, or studies and priors").arg(label, p));
        for (const auto &[key, field] : {std::pair{"priors", &SavedSearch::priorsPerStudy}, std::pair{"everyMinutes", &SavedSearch::everyMinutes}}) {
            const QJsonValue f = o.value(QLatin1String(key));
            if (f.isUndefined())
                continue;
            if (!f.isDouble() || f.toDouble() != double(f.toInt()))
                return invalid(QStringLiteral("%1: \"%2\" is not a whole number").arg(label, QLatin1String(key)));
            s.*field = f.toInt();
        }
        if (Error e = s.validate(); e.isError())
            return e;
        if (out.find(s.name))
            return invalid(QStringLiteral("two searches are named \"%1\"").arg(s.name));
        out.searches << s;
    }
    return out;
}

QByteArray SavedSearches::toJson() const
{
    QJsonArray list;
    for (const SavedSearch &s : searches) {
        QJsonObject o;
        o.insert(QLatin1String("name"), s.name);
        for (const auto &[key, field] : {std::pair{"patientName", &SavedSearch::patientName}, std::pair{"patientId", &SavedSearch::patientId},
                                         std::pair{"accession", &SavedSearch::accessionNumber}, std::pair{"modality", &SavedSearch::modality},
                                         std::pair{"description", &SavedSearch::description}}) {
            if (!(s.*field).isEmpty())
                o.insert(QLatin1String(key), s.*field);
        }
        o.insert(QLatin1String("dates"), s.dates.toText());
        if (!s.stores.isEmpty())
            o.insert(QLatin1String("stores"), QJsonArray::fromStringList(s.stores));
        o.insert(QLatin1String("prefetch"), SavedSearch::prefetchText(s.prefetch));
        o.insert(QLatin1String("priors"), s.priorsPerStudy);
        o.insert(QLatin1String("everyMinutes"), s.everyMinutes);
        list.append(o);
    }
    QJsonObject root;
    root.insert(QLatin1String("format"), QLatin1String(kFormat));
    root.insert(QLatin1String("searches"), list);
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

Result<SavedSearches> SavedSearches::load(const QString &path)
{
    const Result<UserFile> file = readUserFile(path);
    if (!file.isOk())
        return file.error();
    if (!file.value().exists)
        return SavedSearches();
    Result<SavedSearches> read = fromJson(file.value().bytes);
    return read.isOk() ? read : Result<SavedSearches>(inFile(path, read.error()));
}

Error SavedSearches::save(const QString &path) const
{
    return writeUserFile(path, toJson());
}

QString SavedSearches::defaultPath()
{
    return WorkstationPaths::configDirectory() + QStringLiteral("/saved-searches.json");
}

const SavedSearch *SavedSearches::find(const QString &name) const
{
    for (const SavedSearch &s : searches) {
        if (s.name == name)
            return &s;
    }
    return nullptr;
}

Error SavedSearches::put(const SavedSearch &search)
{
    if (Error e = search.validate(); e.isError())
        return e;
    for (SavedSearch &s : searches) {
        if (s.name == search.name) {
            s = search;
            return Error();
        }
    }
    if (searches.size() >= kMaxSearches)
        return invalid(QStringLiteral("at most %1 saved searches").arg(kMaxSearches));
    searches << search;
    return Error();
}

bool SavedSearches::remove(const QString &name)
{
    return searches.removeIf([&](const SavedSearch &s) { return s.name == name; }) > 0;
}

} // namespace spectrum

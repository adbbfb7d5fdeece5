// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/dicomquery.h"

#include <QRegularExpression>

#include <algorithm>


namespace spectrum {

namespace {

bool safeValue(const QString &v)
{
    // Values go into URLs and DICOM attributes: no control characters, no backslash (DICOM's multi-value
    // separator), bounded length.
    if (v.size() > 64)
        return false;
    for (const QChar c : v) {
        if (c.unicode() < 0x20 || c == QLatin1Char('\\'))
            return false;
    }
    return true;
}

} // namespace

Error DicomQuery::validate() const
{
    for (const QString &v : {patientName, patientId, accessionNumber, modality, description, studyInstanceUid, seriesInstanceUid}) {
        if (!safeValue(v))
            return Error(ErrorCode::InvalidArgument, QStringLiteral("query value '%1' is too long or holds control characters or '\\'").arg(v.left(80)));
    }
    if (dateFrom.isValid() && dateTo.isValid() && dateFrom > dateTo)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the date range ends (%1) before it starts (%2)").arg(dateTo.toString(Qt::ISODate), dateFrom.toString(Qt::ISODate)));
    if (limit < 0 || offset < 0)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("limit and offset must not be negative"));
    if (instanceNumber < 0 || (instanceNumber != 0 && level != QueryLevel::Instance))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("an Instance Number is matched at instance level, and is not negative"));
    if (level == QueryLevel::Instance && studyInstanceUid.isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("an instance query needs its study's Study Instance UID"));
    if (!seriesInstanceUid.isEmpty() && studyInstanceUid.isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("a series is only looked up within its study"));
    return Error();
}

QString DicomQuery::dicomDateRange() const
{
    if (!dateFrom.isValid() && !dateTo.isValid())
        return {};
    const QString from = dateFrom.isValid() ? dateFrom.toString(QStringLiteral("yyyyMMdd")) : QString();
    const QString to = dateTo.isValid() ? dateTo.toString(QStringLiteral("yyyyMMdd")) : QString();
    return from == to ? from : from + QLatin1Char('-') + to;
}

namespace {
/// DICOM wildcard matching (* and ?), case-insensitive as most archives do it for names. Greedy, going back only
/// to the last star: linear in practice and never exponential, and no pattern compiled per value (a cache's study
/// search matches thousands of names).
bool wildcardMatch(const QString &pattern, const QString &value)
{
    if (pattern.isEmpty())
        return true;
    auto same = [](QChar a, QChar b) { return a == b || a.toCaseFolded() == b.toCaseFolded(); };
    // '?' stands for one character: both halves of a surrogate pair.
    auto width = [&](qsizetype at) { return value[at].isHighSurrogate() && at + 1 < value.size() && value[at + 1].isLowSurrogate() ? 2 : 1; };
    qsizetype p = 0, v = 0, star = -1, mark = 0;
    while (v < value.size()) {
        if (p < pattern.size() && pattern[p] == QLatin1Char('*')) {
            star = p++;
            mark = v;
        } else if (p < pattern.size() && pattern[p] == QLatin1Char('?')) {
            ++p;
            v += width(v);
        } else if (p < pattern.size() && same(pattern[p], value[v])) {
            ++p;
            ++v;
        } else if (star >= 0) {
            p = star + 1;
            mark += width(mark);
            v = mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == QLatin1Char('*'))
        ++p;
    return p == pattern.size();
}
} // namespace

namespace {
/// A name matches as a whole or in any of its component groups: "山田*" finds "Yamada^Tarou=山田^太郎=…".
bool nameMatches(const QString &pattern, const QString &name)
{
    if (wildcardMatch(pattern, name))
        return true;
    const QStringList groups = name.split(QLatin1Char('='));
    return groups.size() > 1 && std::any_of(groups.begin(), groups.end(), [&](const QString &g) { return !g.isEmpty() && wildcardMatch(pattern, g); });
}
} // namespace

namespace {
bool hasWildcard(const QString &s)
{
    return s.contains(QLatin1Char('*')) || s.contains(QLatin1Char('?'));
}

/// Case- and accent-folded: "José" → "jose", "MÜLLER" → "muller".
QString folded(const QString &s)
{
    const QString d = s.normalized(QString::NormalizationForm_KD);
    QString out;
    out.reserve(d.size());
    for (const QChar c : d)
        if (c.category() != QChar::Mark_NonSpacing && c.category() != QChar::Mark_SpacingCombining && c.category() != QChar::Mark_Enclosing)
            out += c;
    return out.toCaseFolded();
}

/// The words a person typed: split at spaces, commas and the carets of a DICOM name.
QStringList typedWords(const QString &typed)
{
    static const QRegularExpression separators(QStringLiteral("[\\s,^=]+"));
    return typed.split(separators, Qt::SkipEmptyParts);
}
} // namespace

QString DicomQuery::nameQueryFor(const QString &typed)
{
    const QString t = typed.trimmed();
    if (t.isEmpty() || hasWildcard(t))
        return t;
    const QStringList words = typedWords(t);
    if (words.isEmpty())
        return QString();
    const QString longest = *std::max_element(words.begin(), words.end(), [](const QString &a, const QString &b) { return a.size() < b.size(); });
    // Archives may match names case by case (DICOM says so; DCMTK's does) and hold them upper case, as most
    // modalities write them: a word typed all in lower case is asked for in upper case (typed with capitals, as
    // typed). A letter outside ASCII may be stored with or without its accent, or in another form: a wildcard in
    // its place. What the archive answers is matched again here (nameMatchesTyped).
    // (Letters beyond ASCII are made wildcards first: "ß" upper-cased would become "SS".)
    const bool lower = longest == longest.toLower();
    QString asked;
    for (const QChar c : longest) {
        if (c.unicode() < 0x80)
            asked += lower ? c.toUpper() : c;
        else if (!asked.endsWith(QLatin1Char('*')))
            asked += QLatin1Char('*');
    }
    if (!asked.startsWith(QLatin1Char('*')))
        asked.prepend(QLatin1Char('*'));
    if (!asked.endsWith(QLatin1Char('*')))
        asked += QLatin1Char('*');
    // Nothing left to narrow by (a name in another script): asked as typed, never for every study there is.
    return asked == QLatin1String("*") ? QLatin1Char('*') + longest + QLatin1Char('*') : asked;
}

bool DicomQuery::nameMatchesTyped(const QString &typed, const QString &name)
{
    const QString t = typed.trimmed();
    if (t.isEmpty())
        return true;
    if (hasWildcard(t))
        return nameMatches(t, name);
    // Every component of every group, folded: "Yamada^Tarou=山田^太郎" → yamada, tarou, 山田, 太郎.
    QStringList components;
    for (const QString &group : name.split(QLatin1Char('=')))
        for (const QString &c : group.split(QLatin1Char('^')))
            for (const QString &word : c.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
                // "Smith-Jones", "O'Brien", "St.John": found by each part and by the whole without its marks.
                static const QRegularExpression marks(QStringLiteral("[-'’.]"));
                components << folded(word);
                if (word.contains(marks)) {
                    components << folded(QString(word).remove(marks));
                    for (const QString &part : word.split(marks, Qt::SkipEmptyParts))
                        components << folded(part);
                }
            }
    const QStringList words = typedWords(t);
    return !words.isEmpty() && std::all_of(words.begin(), words.end(), [&](const QString &w) {
        const QString f = folded(w);
        return std::any_of(components.begin(), components.end(), [&](const QString &c) { return c.startsWith(f); });
    });
}

bool DicomQuery::matchesStudy(const DicomIdentity &id, const QStringList &modalitiesInStudy) const
{
    if (!nameMatches(patientName, id.patientName) || !wildcardMatch(patientId, id.patientId)
        || !wildcardMatch(accessionNumber, id.accessionNumber) || !wildcardMatch(description, id.studyDescription))
        return false;
    if (!studyInstanceUid.isEmpty() && studyInstanceUid != id.studyInstanceUid)
        return false;
    const QDate date = QDate::fromString(id.studyDate, QStringLiteral("yyyyMMdd"));
    if (dateFrom.isValid() && (!date.isValid() || date < dateFrom))
        return false;
    if (dateTo.isValid() && (!date.isValid() || date > dateTo))
        return false;
    return modality.isEmpty() || modalitiesInStudy.contains(modality, Qt::CaseInsensitive);
}

} // namespace spectrum

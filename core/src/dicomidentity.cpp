// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/dicomidentity.h"

#include <QRegularExpression>

#include <QStringList>

#include <cmath>

namespace spectrum {

namespace {
// One table drives JSON in both directions and equality, so a new field cannot be forgotten in one of them.
struct StringField { const char *name; QString DicomIdentity::*member; };
const StringField kStringFields[] = {
    {"patientName", &DicomIdentity::patientName},
    {"patientId", &DicomIdentity::patientId},
    {"issuerOfPatientId", &DicomIdentity::issuerOfPatientId},
    {"patientBirthDate", &DicomIdentity::patientBirthDate},
    {"patientSex", &DicomIdentity::patientSex},
    {"studyInstanceUid", &DicomIdentity::studyInstanceUid},
    {"studyDate", &DicomIdentity::studyDate},
    {"studyTime", &DicomIdentity::studyTime},
    {"studyDescription", &DicomIdentity::studyDescription},
    {"accessionNumber", &DicomIdentity::accessionNumber},
    {"seriesInstanceUid", &DicomIdentity::seriesInstanceUid},
    {"modality", &DicomIdentity::modality},
    {"seriesDescription", &DicomIdentity::seriesDescription},
    {"bodyPartExamined", &DicomIdentity::bodyPartExamined},
    {"viewPosition", &DicomIdentity::viewPosition},
    {"imageOrientation", &DicomIdentity::imageOrientation},
    {"sliceThickness", &DicomIdentity::sliceThickness},
    {"imagePosition", &DicomIdentity::imagePosition},
    {"frameOfReferenceUid", &DicomIdentity::frameOfReferenceUid},
    {"sopInstanceUid", &DicomIdentity::sopInstanceUid},
    {"sopClassUid", &DicomIdentity::sopClassUid},
};
struct IntField { const char *name; int DicomIdentity::*member; };
const IntField kIntFields[] = {
    {"seriesNumber", &DicomIdentity::seriesNumber},
    {"instanceNumber", &DicomIdentity::instanceNumber},
};
} // namespace

QJsonObject DicomIdentity::toJson() const
{
    QJsonObject json;
    for (const auto &f : kStringFields) {
        if (!(this->*f.member).isEmpty())
            json.insert(QLatin1String(f.name), this->*f.member);
    }
    for (const auto &f : kIntFields)
        json.insert(QLatin1String(f.name), this->*f.member);
    return json;
}

DicomIdentity DicomIdentity::fromJson(const QJsonObject &json)
{
    DicomIdentity id;
    for (const auto &f : kStringFields)
        id.*f.member = json.value(QLatin1String(f.name)).toString();
    for (const auto &f : kIntFields)
        id.*f.member = json.value(QLatin1String(f.name)).toInt();
    return id;
}

bool operator==(const DicomIdentity &a, const DicomIdentity &b)
{
    for (const auto &f : kStringFields) {
        if (a.*f.member != b.*f.member)
            return false;
    }
    for (const auto &f : kIntFields) {
        if (a.*f.member != b.*f.member)
            return false;
    }
    return true;
}

QString DicomIdentity::formatDecimals(const std::vector<double> &values)
{
    QStringList parts;
    for (double v : values)
        parts << QString::number(v == 0 ? 0.0 : v, 'g', 10);  // no "-0"
    return parts.join(QLatin1Char('\\'));
}

QString DicomIdentity::planeOf(const QString &imageOrientation, bool nearest)
{
    const QStringList p = imageOrientation.split(QLatin1Char('\\'));
    if (p.size() != 6)
        return QString();
    double v[6];
    for (int i = 0; i < 6; ++i) {
        bool ok = false;
        v[i] = p[i].toDouble(&ok);
        if (!ok)
            return QString();
    }
    const double n[3] = {v[1] * v[5] - v[2] * v[4], v[2] * v[3] - v[0] * v[5], v[0] * v[4] - v[1] * v[3]};
    const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (length < 1e-6)
        return QString();
    const double cos10 = nearest ? 0.0 : 0.9848;
    if (nearest) {
        const double ax = std::abs(n[0]), ay = std::abs(n[1]), az = std::abs(n[2]);
        return az >= ay && az >= ax ? QStringLiteral("Axial") : ay >= ax ? QStringLiteral("Coronal") : QStringLiteral("Sagittal");
    }
    if (std::abs(n[2]) / length >= cos10)
        return QStringLiteral("Axial");
    if (std::abs(n[1]) / length >= cos10)
        return QStringLiteral("Coronal");
    if (std::abs(n[0]) / length >= cos10)
        return QStringLiteral("Sagittal");
    return QStringLiteral("Oblique");
}

QString DicomIdentity::displayDate(const QString &d)
{
    return d.size() == 8 ? d.left(4) + QLatin1Char('-') + d.mid(4, 2) + QLatin1Char('-') + d.right(2) : d;
}

namespace {
/// One component group: "Family, Given Middle Prefix Suffix" (alphabetic) or, with `comma` false, the components
/// separated by spaces (ideographic and phonetic groups read so).
QString componentGroup(const QString &group, bool comma)
{
    QStringList parts = group.split(QLatin1Char('^'));
    while (!parts.isEmpty() && parts.last().trimmed().isEmpty())
        parts.removeLast();
    if (parts.size() <= 1)
        return parts.value(0).trimmed();
    const QString family = parts.takeFirst().trimmed();
    QStringList rest;
    for (const QString &p : parts) {
        if (!p.trimmed().isEmpty())
            rest << p.trimmed();
    }
    if (rest.isEmpty())
        return family;
    return family.isEmpty() ? rest.join(QLatin1Char(' ')) : family + (comma ? QStringLiteral(", ") : QStringLiteral(" ")) + rest.join(QLatin1Char(' '));
}
} // namespace

QString DicomIdentity::displayDescription(const QString &description)
{
    static const QRegularExpression longDecimal(QStringLiteral("(?<![\\d.])(\\d+)\\.(\\d{5,})(?![\\d.])"));
    QString out;
    qsizetype from = 0;
    for (QRegularExpressionMatchIterator it = longDecimal.globalMatch(description); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        out += description.mid(from, m.capturedStart() - from);
        QString rounded = QString::number(m.captured().toDouble(), 'f', 2);
        while (rounded.endsWith(QLatin1Char('0')))
            rounded.chop(1);
        if (rounded.endsWith(QLatin1Char('.')))
            rounded.chop(1);
        out += rounded == QLatin1String("0") ? m.captured() : rounded;  // never a value made zero
        from = m.capturedEnd();
    }
    return out + description.mid(from);
}

QString DicomIdentity::displayName(const QString &personName)
{
    // Up to three component groups (PS3.5 6.2.1.1): alphabetic, ideographic, phonetic. Shown as
    // "Yamada, Tarou (山田 太郎)"; the phonetic group only when it is all there is.
    const QStringList groups = personName.split(QLatin1Char('='));
    const QString alphabetic = componentGroup(groups.value(0), true);
    const QString ideographic = componentGroup(groups.value(1), false);
    const QString phonetic = componentGroup(groups.value(2), false);
    if (!alphabetic.isEmpty())
        return ideographic.isEmpty() ? alphabetic : QStringLiteral("%1 (%2)").arg(alphabetic, ideographic);
    return !ideographic.isEmpty() ? ideographic : phonetic;
}

} // namespace spectrum

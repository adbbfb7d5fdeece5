// SPDX-License-Identifier: Apache-2.0
// What the archive commands share (archivesupport.h).
#include "archivesupport.h"
#include "commands.h"

#include "spectrum/stores/blobs/filestore.h"

#include <QDate>

namespace spectrum::cli {

void addConfigOption(QCommandLineParser &p)
{
    p.addOption({QStringLiteral("config"), QStringLiteral("Store configuration file (default: $SPECTRUM_CONFIG, else %1).").arg(StoreConfigFile::defaultPath()),
                 QStringLiteral("FILE")});
}

Result<StoreConfigFile> loadConfig(const QCommandLineParser &p)
{
    return StoreConfigFile::load(p.isSet(QStringLiteral("config")) ? p.value(QStringLiteral("config")) : StoreConfigFile::defaultPath());
}

/// The registry over the configuration and the workstation's cache (opened only when `withCache`).
Result<std::unique_ptr<StoreRegistry>> registry(const StoreConfigFile &config, bool withCache)
{
    std::shared_ptr<FileStore> cache;
    if (withCache) {
        Result<std::unique_ptr<FileStore>> opened = openCache();
        if (!opened.isOk())
            return opened.error();
        cache = std::shared_ptr<FileStore>(opened.takeValue());
    }
    return std::make_unique<StoreRegistry>(config, cache);
}

void addQueryOptions(QCommandLineParser &p)
{
    p.addOptions({
        {QStringLiteral("patient-name"), QStringLiteral("Patient name as you would say it (the start of any part of it, any case or accent: \"doe john\"), "
                                                        "or a DICOM pattern with * and ?."), QStringLiteral("P")},
        {QStringLiteral("patient-id"), QStringLiteral("Patient ID."), QStringLiteral("ID")},
        {QStringLiteral("date"), QStringLiteral("Study date YYYYMMDD, or a range FROM-TO (either end may be left out); \"today\" for today's."), QStringLiteral("FROM-TO")},
        {QStringLiteral("modality"), QStringLiteral("A modality in the study (CT, MR…)."), QStringLiteral("M")},
        {QStringLiteral("accession"), QStringLiteral("Accession number."), QStringLiteral("A")},
        {QStringLiteral("description"), QStringLiteral("Study description, wildcards allowed."), QStringLiteral("TEXT")},
        {QStringLiteral("limit"), QStringLiteral("At most this many studies."), QStringLiteral("N")},
    });
}

Result<DicomQuery> queryFrom(const QCommandLineParser &p)
{
    DicomQuery q;
    q.patientName = DicomQuery::nameQueryFor(p.value(QStringLiteral("patient-name")));  // matched again: nameAsTyped()
    q.patientId = p.value(QStringLiteral("patient-id"));
    q.modality = p.value(QStringLiteral("modality"));
    q.accessionNumber = p.value(QStringLiteral("accession"));
    q.description = p.value(QStringLiteral("description"));
    q.limit = p.value(QStringLiteral("limit")).toInt();
    if (p.isSet(QStringLiteral("date"))) {
        const QString d = p.value(QStringLiteral("date"));
        if (d == QLatin1String("today")) {
            q.dateFrom = q.dateTo = QDate::currentDate();
        } else {
            const QStringList parts = d.contains(QLatin1Char('-')) ? d.split(QLatin1Char('-')) : QStringList{d, d};
            q.dateFrom = QDate::fromString(parts.value(0), QStringLiteral("yyyyMMdd"));
            q.dateTo = QDate::fromString(parts.value(1), QStringLiteral("yyyyMMdd"));
            if (parts.size() != 2 || (!parts[0].isEmpty() && !q.dateFrom.isValid()) || (!parts[1].isEmpty() && !q.dateTo.isValid()))
                return Error(ErrorCode::InvalidArgument, QStringLiteral("--date takes YYYYMMDD, FROM-TO in YYYYMMDD, or today"));
        }
    }
    if (Error e = q.validate(); e.isError())
        return e;
    return q;
}

bool nameAsTyped(const QCommandLineParser &p, const QString &patientName)
{
    const QString typed = p.value(QStringLiteral("patient-name")).trimmed();
    return typed.isEmpty() || DicomQuery::nameMatchesTyped(typed, patientName);
}

} // namespace spectrum::cli

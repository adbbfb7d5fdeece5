// SPDX-License-Identifier: Apache-2.0
// spectrum-cli's findings and what leaves the workstation with them: the Structured Reports of a study read back —
// ours and other software's — as the workstation reads them (each finding's kind, words, values and units, the image
// and frame it lies on, its points; what a report holds that is not drawn, and why); and a de-identified copy of a
// study, to a folder or a store.

#include "archivesupport.h"
#include "commands.h"
#include "output.h"

#include "spectrum/core/resultjob.h"
#include "spectrum/imaging/documents/measurementreport.h"
#include "spectrum/stores/exchange/deidentifiedexport.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/reading/studycatalog.h"

#include <QCommandLineParser>
#include <QFile>
#include <QTemporaryDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace spectrum::cli {

namespace {

QString pointsText(const QList<QPointF> &points)
{
    QStringList p;
    for (const QPointF &q : points)
        p << QStringLiteral("(%1, %2)").arg(q.x(), 0, 'f', 2).arg(q.y(), 0, 'f', 2);
    return p.join(QLatin1Char(' '));
}

QJsonObject toJson(const ReadReport &r, const QString &source)
{
    QJsonArray findings;
    for (const ReportedFinding &f : r.findings) {
        QJsonArray points, values;
        for (const QPointF &p : f.annotation.points)
            points.append(QJsonArray{p.x(), p.y()});
        for (const MeasuredValue &v : f.values)
            values.append(QJsonObject{{QStringLiteral("quantity"), quantityName(v.quantity)}, {QStringLiteral("value"), v.value},
                                      {QStringLiteral("unit"), v.unit}, {QStringLiteral("shownAs"), v.unitMeaning}});
        findings.append(QJsonObject{{QStringLiteral("kind"), kindName(f.annotation.kind)},
                                    {QStringLiteral("label"), f.label},
                                    {QStringLiteral("text"), f.annotation.text},
                                    {QStringLiteral("trackingUid"), f.annotation.trackingUid},
                                    {QStringLiteral("sopInstanceUid"), f.image.sopInstanceUid},
                                    {QStringLiteral("frame"), f.image.frame},
                                    {QStringLiteral("points"), points},
                                    {QStringLiteral("values"), values},
                                    {QStringLiteral("otherValues"), QJsonArray::fromStringList(f.otherValues)}});
    }
    return QJsonObject{{QStringLiteral("source"), source},
                       {QStringLiteral("sopInstanceUid"), r.identity.sopInstanceUid},
                       {QStringLiteral("studyInstanceUid"), r.identity.studyInstanceUid},
                       {QStringLiteral("patientName"), r.identity.patientName},
                       {QStringLiteral("patientId"), r.identity.patientId},
                       {QStringLiteral("title"), r.title},
                       {QStringLiteral("template"), r.templateId},
                       {QStringLiteral("observer"), r.observerName},
                       {QStringLiteral("contentDateTime"), r.contentDateTime},
                       {QStringLiteral("completion"), r.completion},
                       {QStringLiteral("verification"), r.verification},
                       {QStringLiteral("findings"), findings},
                       {QStringLiteral("notShown"), QJsonArray::fromStringList(r.notShown)}};
}

void print(const ReadReport &r, const QString &source)
{
    out(QStringLiteral("%1 — %2%3").arg(source, r.title.isEmpty() ? QStringLiteral("(untitled)") : r.title,
                                       r.templateId.isEmpty() ? QString() : QStringLiteral(" (TID %1)").arg(r.templateId)));
    out(QStringLiteral("  patient %1 (%2), study %3").arg(DicomIdentity::displayName(r.identity.patientName), r.identity.patientId, r.identity.studyInstanceUid));
    const QString when = r.contentDateTime.size() >= 12 ? QStringLiteral("%1 %2:%3").arg(DicomIdentity::displayDate(r.contentDateTime.left(8)),
                                                                                        r.contentDateTime.mid(8, 2), r.contentDateTime.mid(10, 2))
                                                       : r.contentDateTime;
    out(QStringLiteral("  by %1 on %2, %3, %4").arg(r.observerName.isEmpty() ? QStringLiteral("(no observer named)") : DicomIdentity::displayName(r.observerName),
                                                   when, r.completion, r.verification));
    for (const ReportedFinding &f : r.findings) {
        const QString what = f.annotation.text.isEmpty() ? kindName(f.annotation.kind) : QStringLiteral("%1 \"%2\"").arg(kindName(f.annotation.kind), f.annotation.text);
        QString values = describeValues(f.values).replace(QLatin1Char('\n'), QStringLiteral("; "));
        if (!f.otherValues.isEmpty())
            values += (values.isEmpty() ? QString() : QStringLiteral("; ")) + f.otherValues.join(QStringLiteral("; "));
        out(QStringLiteral("  %1%2").arg(what, values.isEmpty() ? QString() : QStringLiteral(": ") + values));
        out(QStringLiteral("      on %1%2 at %3%4")
                .arg(f.image.sopInstanceUid, f.image.frame > 0 ? QStringLiteral(" frame %1").arg(f.image.frame) : QString(), pointsText(f.annotation.points),
                     f.label.isEmpty() || f.label == f.annotation.text ? QString() : QStringLiteral("  [%1]").arg(f.label)));
    }
    for (const QString &line : r.notShown)
        out(QStringLiteral("  not drawn: %1").arg(line));
}

int cmdFindings(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Reads back the findings of a study's Structured Reports in the disk cache (or of SR files), as the "
                                               "workstation shows them: each finding's kind, values, image and points, and what is not drawn."));
    p.addHelpOption();
    p.addOption({QStringLiteral("json"), QStringLiteral("One JSON document: a list of reports.")});
    p.addPositionalArgument(QStringLiteral("what"), QStringLiteral("A Study Instance UID in the cache, or SR files."), QStringLiteral("STUDY_UID|FILE..."));
    processArguments(p, args);
    const QStringList what = p.positionalArguments();
    if (what.isEmpty())
        return fail(QStringLiteral("findings: name a study or SR files"), 2);
    QList<QPair<QString, QByteArray>> reports;  // (where from, bytes)
    if (what.size() == 1 && !QFile::exists(what.first())) {
        auto cache = openCache();
        if (!cache.isOk())
            return fail(cache.error().toString());
        Result<QList<StudySummary>> studies = runSync(loadStudies(cache.value().get(), what.first()));
        if (!studies.isOk())
            return fail(studies.error().toString());
        if (studies.value().isEmpty())
            return fail(QStringLiteral("findings: no study %1 in the cache").arg(what.first()));
        for (const StudySummary &study : studies.value())
            for (const SeriesSummary &s : study.series)
                if (s.modality == QLatin1String("SR"))
                    for (const InstanceRef &i : s.instances) {
                        Result<ByteView> bytes = runSync(cache.value()->read(i.key));
                        if (!bytes.isOk())
                            return fail(bytes.error().withContext(i.key).toString());
                        reports << qMakePair(QStringLiteral("report %1").arg(i.sopInstanceUid), bytes.value().toByteArray());
                    }
        if (reports.isEmpty() && !p.isSet(QStringLiteral("json"))) {
            out(QStringLiteral("no reports in study %1").arg(what.first()));
            return 0;
        }
    } else {
        for (const QString &file : what) {
            QFile f(file);
            if (!f.open(QIODevice::ReadOnly))
                return fail(QStringLiteral("findings: %1: %2").arg(file, f.errorString()));
            reports << qMakePair(file, f.readAll());
        }
    }
    QJsonArray json;
    int failed = 0;
    for (const auto &[source, bytes] : reports) {
        Result<ReadReport> r = readStructuredReport(ByteView(bytes));
        if (!r.isOk()) {
            fail(QStringLiteral("%1: %2").arg(source, r.error().toString()));
            ++failed;
            continue;
        }
        if (p.isSet(QStringLiteral("json")))
            json.append(toJson(r.value(), source));
        else
            print(r.value(), source);
    }
    if (p.isSet(QStringLiteral("json")))
        out(QString::fromUtf8(QJsonDocument(json).toJson(QJsonDocument::Indented)));
    return failed > 0 ? 1 : 0;
}

int cmdDeidentify(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Writes a de-identified copy of a study in the disk cache (DICOM PS3.15 Annex E, Basic Profile — all of Table E.1-1 — "
        "with Clean Structured Content and Clean Graphics): identifying attributes removed, emptied or replaced, private tags and overlays removed, new UIDs consistent within the copy, "
        "pixel data unchanged. Images whose pixels may show text (Burned In Annotation) are listed: check them before sharing."));
    p.addHelpOption();
    addConfigOption(p);
    p.addPositionalArgument(QStringLiteral("study"), QStringLiteral("The Study Instance UID of a study in the cache."), QStringLiteral("STUDY_UID"));
    p.addOption({QStringLiteral("out"), QStringLiteral("Folder to write the copy into."), QStringLiteral("DIR")});
    p.addOption({QStringLiteral("store"), QStringLiteral("Send the copy to this store instead (STOW-RS, C-STORE, blobd)."), QStringLiteral("NAME")});
    p.addOption({QStringLiteral("retain-dates"), QStringLiteral("Keep the dates and times (Retain Longitudinal Temporal Information with Full Dates).")});
    p.addOption({QStringLiteral("patient-name"), QStringLiteral("The copy's Patient's Name (default ANONYMOUS)."), QStringLiteral("NAME")});
    p.addOption({QStringLiteral("patient-id"), QStringLiteral("The copy's Patient ID (default: a pseudonym of this copy)."), QStringLiteral("ID")});
    processArguments(p, args);
    if (p.positionalArguments().size() != 1 || p.isSet(QStringLiteral("out")) == p.isSet(QStringLiteral("store")))
        return fail(QStringLiteral("deidentify: STUDY_UID and either --out DIR or --store NAME"), 2);
    auto cache = openCache();
    if (!cache.isOk())
        return fail(cache.error().toString());
    const QString studyUid = p.positionalArguments().first();
    Result<QList<StudySummary>> studies = runSync(loadStudies(cache.value().get(), studyUid));
    if (!studies.isOk())
        return fail(studies.error().toString());
    QStringList keys;
    for (const StudySummary &study : studies.value())
        for (const SeriesSummary &s : study.series)
            for (const InstanceRef &i : s.instances)
                keys << i.key;
    if (keys.isEmpty())
        return fail(QStringLiteral("deidentify: no study %1 in the cache").arg(studyUid));
    if (studies.value().size() > 1)
        return fail(QStringLiteral("deidentify: study %1 is listed under %2 patients in the cache: not copied").arg(studyUid).arg(studies.value().size()));
    DeidentifyOptions options;
    options.retainDates = p.isSet(QStringLiteral("retain-dates"));
    options.patientName = p.value(QStringLiteral("patient-name"));
    options.patientId = p.value(QStringLiteral("patient-id"));
    QTemporaryDir staging;
    const QString outDir = p.isSet(QStringLiteral("out")) ? p.value(QStringLiteral("out")) : staging.path();
    Result<DeidentifiedExport> done = runSync(exportDeidentified(cache.value().get(), keys, options, outDir));
    if (!done.isOk())
        return fail(done.error().toString());
    for (const auto &[sop, why] : done.value().burnedIn)
        std::fprintf(stderr, "check %s: %s\n", qPrintable(sop), qPrintable(why));
    if (done.value().textsKept > 0)
        std::fprintf(stderr, "%d free text(s) kept as written (report texts, notes): read them before sharing\n", done.value().textsKept);
    if (p.isSet(QStringLiteral("store"))) {
        Result<StoreConfigFile> config = loadConfig(p);
        if (!config.isOk())
            return fail(config.error().toString());
        Result<std::unique_ptr<StoreRegistry>> reg = registry(config.value(), false);
        if (!reg.isOk())
            return fail(reg.error().toString());
        Result<ExportSummary> sent = runSync(reg.value()->exportFiles(p.value(QStringLiteral("store")), done.value().files));
        if (!sent.isOk())
            return fail(sent.error().toString());
        for (const auto &[what, why] : sent.value().failed)
            std::fprintf(stderr, "%s: %s\n", qPrintable(what), qPrintable(why));
        out(QStringLiteral("%1 de-identified instance(s) stored in %2, %3 refused (%4)")
                .arg(sent.value().stored.size()).arg(p.value(QStringLiteral("store"))).arg(sent.value().failed.size()).arg(deidentificationMethod(options)));
        return sent.value().failed.isEmpty() ? 0 : 1;
    }
    out(QStringLiteral("%1 de-identified instance(s) in %2 (%3)").arg(done.value().files.size()).arg(outDir, deidentificationMethod(options)));
    return 0;
}

} // namespace

QList<Command> findingsCommands()
{
    return {{"findings", "STUDY_UID|FILE... [--json]", "the findings of a study's reports (or SR files), read back as the workstation shows them",
             cmdFindings},
            {"deidentify", "STUDY_UID --out DIR|--store NAME [--retain-dates]", "a de-identified copy of a cached study (PS3.15 Basic Profile)",
             cmdDeidentify}};
}

} // namespace spectrum::cli

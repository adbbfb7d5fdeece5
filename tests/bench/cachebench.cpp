// SPDX-License-Identifier: Apache-2.0
// spectrum-cachebench: the disk cache at a reading room's scale (cache.sh).
//   fill DIR N      puts N small synthetic instances (as fetches commit them: not synced, SHA-256 deferred, their
//                   DICOM identity known) into the cache at DIR: 200 instances a study, 2 studies a patient, names
//                   drawn from a list of 400 family names; prints instances/s
//   open DIR [NAME] opens the cache, then searches its studies by patient name (DICOM wildcards), in this
//                   process: prints the open and search times in ms, the studies found and the resident memory

#include "output.h"
#include "procmemory.h"

#include "spectrum/core/resultjob.h"
#include "spectrum/stores/blobs/filestore.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>

#include <atomic>
#include <cstring>
#include <thread>

using namespace spectrum;
using spectrum::cli::fail;
using spectrum::cli::out;
using spectrum::bench::memoryOf;

namespace {

QString familyName(int i)
{
    static const char *const syllables[] = {"AN", "BER", "CO", "DA", "EL", "FOR", "GA", "HAN", "IS", "JO", "KAR", "LI", "MOR", "NA", "OL", "PE", "QUI", "RO", "SAN", "TA"};
    return QString::fromLatin1(syllables[i % 20]) + QString::fromLatin1(syllables[(i / 20) % 20]) + QStringLiteral("SON");
}

DicomIdentity instance(qint64 n)
{
    const qint64 study = n / 200, patient = study / 2;
    DicomIdentity id;
    id.patientName = familyName(int(patient % 400)) + QStringLiteral("^P") + QString::number(patient);
    id.patientId = QStringLiteral("PID%1").arg(patient, 7, 10, QLatin1Char('0'));
    id.patientBirthDate = QStringLiteral("19600101");
    id.patientSex = patient % 2 ? QStringLiteral("F") : QStringLiteral("M");
    id.studyInstanceUid = QStringLiteral("1.2.826.0.1.3680043.10.511.1.%1").arg(study);
    id.studyDate = QStringLiteral("2026%1%2").arg(study % 12 + 1, 2, 10, QLatin1Char('0')).arg(study % 28 + 1, 2, 10, QLatin1Char('0'));
    id.studyTime = QStringLiteral("101500");
    id.studyDescription = study % 3 ? QStringLiteral("CT CHEST") : QStringLiteral("MR BRAIN");
    id.accessionNumber = QStringLiteral("A%1").arg(study);
    id.seriesInstanceUid = id.studyInstanceUid + QStringLiteral(".%1").arg(n % 200 / 100 + 1);
    id.modality = study % 3 ? QStringLiteral("CT") : QStringLiteral("MR");
    id.seriesNumber = int(n % 200 / 100 + 1);
    id.seriesDescription = QStringLiteral("AXIAL");
    id.sopInstanceUid = id.seriesInstanceUid + QStringLiteral(".%1").arg(n % 100 + 1);
    id.sopClassUid = QStringLiteral("1.2.840.10008.5.1.4.1.1.2");
    id.instanceNumber = int(n % 100 + 1);
    id.imageOrientation = QStringLiteral("1\\0\\0\\0\\1\\0");
    id.imagePosition = QStringLiteral("-125\\-125\\%1").arg(n % 100 * 2.5);
    id.sliceThickness = QStringLiteral("2.5");
    id.frameOfReferenceUid = id.studyInstanceUid + QStringLiteral(".9");
    return id;
}

int fill(const QString &dir, qint64 count)
{
    Result<std::unique_ptr<FileStore>> opened = FileStore::open(dir, 0);
    if (!opened.isOk())
        return fail(opened.error().toString());
    FileStore &store = *opened.value();
    CommitOptions options;
    options.durable = false;
    options.deferSha256 = true;
    QElapsedTimer timer;
    timer.start();
    // Two writers, as a fetch's network threads commit.
    std::atomic<qint64> next{0};
    std::atomic<int> failed{0};
    auto writer = [&] {
        QByteArray bytes(512, 'x');
        for (qint64 n; (n = next++) < count;) {
            CommitOptions mine = options;
            mine.knownIdentity = instance(n);
            std::memcpy(bytes.data(), &n, sizeof n);
            if (!runSync(store.put(mine.knownIdentity.sopInstanceUid, ByteView(bytes), mine)).isOk())
                ++failed;
            if (n % 100000 == 0 && n > 0)
                std::fprintf(stderr, "%lld…\n", qlonglong(n));
        }
    };
    std::thread other(writer);
    writer();
    other.join();
    if (failed > 0)
        return fail(QStringLiteral("%1 puts failed").arg(failed.load()));
    const double s = timer.nsecsElapsed() / 1e9;
    out(QStringLiteral("filled %1 instances in %2 s (%3/s)").arg(count).arg(s, 0, 'f', 1).arg(count / s, 0, 'f', 0));
    return 0;
}

int openAndSearch(const QString &dir, const QString &name)
{
    const qint64 before = memoryOf("VmRSS");
    QElapsedTimer timer;
    timer.start();
    Result<std::unique_ptr<FileStore>> opened = FileStore::open(dir, 0);
    if (!opened.isOk())
        return fail(opened.error().toString());
    const double openMs = timer.nsecsElapsed() / 1e6;
    DicomQuery q;
    q.patientName = name;
    timer.restart();
    Result<QList<StudySummary>> found = runSync(opened.value()->studies(q));
    const double searchMs = timer.nsecsElapsed() / 1e6;
    if (!found.isOk())
        return fail(found.error().toString());
    int instances = 0;
    for (const StudySummary &s : found.value())
        instances += s.instanceCount;
    const StoreUsage u = opened.value()->usage();
    out(QStringLiteral("open_ms %1 search_ms %2 studies %3 instances %4 blobs %5 rss_mb %6 peak_mb %7 before_mb %8")
            .arg(openMs, 0, 'f', 1).arg(searchMs, 0, 'f', 1).arg(found.value().size()).arg(instances).arg(u.blobs)
            .arg(memoryOf("VmRSS") / 1e6, 0, 'f', 0).arg(memoryOf("VmHWM") / 1e6, 0, 'f', 0).arg(before / 1e6, 0, 'f', 0));
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments().mid(1);
    if (args.size() >= 3 && args[0] == QLatin1String("fill"))
        return fill(args[1], args[2].toLongLong());
    if (args.size() >= 2 && args[0] == QLatin1String("open"))
        return openAndSearch(args[1], args.value(2, QStringLiteral("*")));
    return fail(QStringLiteral("usage: spectrum-cachebench fill DIR N | open DIR [PATIENT-NAME]"), 2);
}

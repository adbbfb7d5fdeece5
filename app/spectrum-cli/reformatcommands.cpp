// SPDX-License-Identifier: Apache-2.0
// spectrum-cli reformat: a plane or a slab projection of a series (from a folder, a study in the cache, or a study
// fetched from a store) as a derived DICOM image or a PNG — the volume and reformatting code the workstation's MPR
// panes use.

#include "archivesupport.h"
#include "commands.h"
#include "imagefile.h"
#include "output.h"

#include "spectrum/core/resultjob.h"
#include "spectrum/imaging/documents/derivedinstance.h"
#include "spectrum/imaging/volumes/reformat.h"
#include "spectrum/imaging/windowlevel.h"
#include "spectrum/stores/blobs/filestore.h"
#include "spectrum/stores/archives/storeregistry.h"
#include "spectrum/stores/reading/studycatalog.h"
#include "spectrum/core/settings.h"

#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QHash>
#include <QSaveFile>
#include <QThread>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentMap>

#include <cmath>
#include <map>
#include <mutex>

namespace spectrum::cli {

namespace {

/// An image the series may be made of: where its bytes are, and its header.
struct Source
{
    QString name;    ///< a file, or a cache key
    ImageInfo info;
};

using Reader = std::function<Result<ByteView>(const QString &name)>;

Result<ByteView> readFile(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return Error(ErrorCode::Io, QStringLiteral("cannot read %1: %2").arg(path, f.errorString()));
    return ByteView(f.readAll());
}

bool parseVector(const QString &text, Vector3 *v)
{
    const QStringList parts = text.split(QLatin1Char(','));
    if (parts.size() != 3)
        return false;
    for (int i = 0; i < 3; ++i) {
        bool ok = false;
        (*v)[size_t(i)] = parts[i].trimmed().toDouble(&ok);
        if (!ok || !std::isfinite((*v)[size_t(i)]))
            return false;
    }
    return true;
}

/// The images named: files and folders (recursively).
QStringList filesIn(const QString &path)
{
    if (!QFileInfo(path).isDir())
        return {path};
    QStringList files;
    QDirIterator it(path, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        files << it.next();
    files.sort();
    return files;
}

/// Paints absent pixels of a rendered plane with dark diagonal stripes: never mistaken for anatomy, never black.
void hatchAbsent(PixelBuffer &rendered, const ReformattedImage &r)
{
    if (r.absence.isEmpty())
        return;
    const int w = rendered.width(), h = rendered.height(), c = PixelBuffer::bytesPerPixel(rendered.format());
    for (int y = 0; y < h; ++y) {
        uchar *row = rendered.frameData(0) + qsizetype(y) * w * c;
        for (int x = 0; x < w; ++x)
            if (!r.isPresent(x, y))
                std::fill(row + x * c, row + (x + 1) * c, uchar(((x + y) / 3) % 2 ? 72 : 24));
    }
}

int cmdReformat(const QStringList &args)
{
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Cuts a plane, or a slab projection, through a series made into a volume (slices ordered by position, spacing from "
        "positions; missing slices left blank, never interpolated across) and writes it as a derived DICOM image — modality "
        "values, the plane's Image Position/Orientation and Pixel Spacing, a Derivation Description — or as a PNG."));
    p.addHelpOption();
    addConfigOption(p);
    p.addPositionalArgument(QStringLiteral("input"), QStringLiteral("A folder (or file) of DICOM images, or the Study Instance UID of a study in the cache (or in --store)."));
    p.addPositionalArgument(QStringLiteral("out"), QStringLiteral("OUT.dcm (a derived image), or .png/.pgm (rendered with --window; one image pixel per sample, "
                                                                 "so a plane across thick slices looks squat: its Pixel Spacing differs by direction)."));
    p.addOptions({
        {QStringLiteral("series"), QStringLiteral("The series to use (default: the one with the most slices)."), QStringLiteral("UID")},
        {QStringLiteral("store"), QStringLiteral("Fetch the study from this store into the cache first."), QStringLiteral("NAME")},
        {QStringLiteral("plane"), QStringLiteral("axial, coronal or sagittal (default coronal): made of the volume's own axes nearest to the patient's."), QStringLiteral("NAME"), QStringLiteral("coronal")},
        {QStringLiteral("at"), QStringLiteral("A patient point (LPS, mm) the plane goes through (default: the volume's centre)."), QStringLiteral("X,Y,Z")},
        {QStringLiteral("row-direction"), QStringLiteral("An oblique plane: the direction along its rows (LPS)."), QStringLiteral("X,Y,Z")},
        {QStringLiteral("column-direction"), QStringLiteral("An oblique plane: the direction down its columns (made perpendicular to the rows)."), QStringLiteral("X,Y,Z")},
        {QStringLiteral("slab"), QStringLiteral("Slab thickness in mm (default 0: the plane alone)."), QStringLiteral("MM")},
        {QStringLiteral("mode"), QStringLiteral("Slab projection: mip, minip or average (default mip)."), QStringLiteral("MODE"), QStringLiteral("mip")},
        {QStringLiteral("nearest"), QStringLiteral("Nearest-voxel sampling instead of trilinear interpolation (oblique planes).")},
        {QStringLiteral("window"), QStringLiteral("For PNG: CENTER,WIDTH in modality units (default: the series' first preset)."), QStringLiteral("C,W")},
        {QStringLiteral("memory"), QStringLiteral("Memory the volume may take, in MiB (default 4096); a larger one is kept on disk."), QStringLiteral("MIB"), QStringLiteral("4096")},
    });
    processArguments(p, args);
    if (p.positionalArguments().size() != 2)
        return fail(QStringLiteral("reformat: INPUT OUT"), 2);
    const QString input = p.positionalArguments().at(0), outPath = p.positionalArguments().at(1);
    const QString suffix = QFileInfo(outPath).suffix().toLower();
    if (suffix != QLatin1String("dcm") && suffix != QLatin1String("png") && suffix != QLatin1String("pgm"))
        return fail(QStringLiteral("reformat: OUT ends in .dcm, .png or .pgm"), 2);
    ReformatPlane wanted;
    const QString mode = p.value(QStringLiteral("mode")).toLower();
    if (mode != QLatin1String("mip") && mode != QLatin1String("minip") && mode != QLatin1String("average"))
        return fail(QStringLiteral("reformat: --mode is mip, minip or average"), 2);
    wanted.slabMode = mode == QLatin1String("mip") ? SlabMode::Mip : mode == QLatin1String("minip") ? SlabMode::MinIp : SlabMode::Average;
    bool ok = true;
    wanted.slabThickness = p.isSet(QStringLiteral("slab")) ? p.value(QStringLiteral("slab")).toDouble(&ok) : 0;
    if (!ok || wanted.slabThickness < 0 || wanted.slabThickness > 500)
        return fail(QStringLiteral("reformat: --slab takes a thickness in mm (0 to 500)"), 2);
    wanted.interpolation = p.isSet(QStringLiteral("nearest")) ? Interpolation::Nearest : Interpolation::Trilinear;
    const QString planeName = p.value(QStringLiteral("plane")).toLower();
    const QHash<QString, PlaneOrientation> orientations{{QStringLiteral("axial"), PlaneOrientation::Axial},
                                                        {QStringLiteral("coronal"), PlaneOrientation::Coronal},
                                                        {QStringLiteral("sagittal"), PlaneOrientation::Sagittal}};
    if (!orientations.contains(planeName))
        return fail(QStringLiteral("reformat: --plane is axial, coronal or sagittal"), 2);
    const bool oblique = p.isSet(QStringLiteral("row-direction")) || p.isSet(QStringLiteral("column-direction"));
    Vector3 rowDirection{}, columnDirection{}, at{};
    if (oblique && (!parseVector(p.value(QStringLiteral("row-direction")), &rowDirection) || !parseVector(p.value(QStringLiteral("column-direction")), &columnDirection)))
        return fail(QStringLiteral("reformat: an oblique plane takes both --row-direction X,Y,Z and --column-direction X,Y,Z"), 2);
    if (oblique) {
        const Vector3 c = vec::cross(rowDirection, columnDirection);
        if (std::sqrt(vec::dot(c, c)) < 1e-6)
            return fail(QStringLiteral("reformat: the row and column directions must not be parallel"), 2);
    }
    if (p.isSet(QStringLiteral("at")) && !parseVector(p.value(QStringLiteral("at")), &at))
        return fail(QStringLiteral("reformat: --at takes X,Y,Z in mm"), 2);
    VoiWindow window{};
    if (p.isSet(QStringLiteral("window"))) {
        const QStringList cw = p.value(QStringLiteral("window")).split(QLatin1Char(','));
        bool okC = false, okW = false;
        if (cw.size() == 2)
            window = VoiWindow{cw[0].toDouble(&okC), cw[1].toDouble(&okW)};
        if (!okC || !okW || window.width < 1)
            return fail(QStringLiteral("reformat: --window takes CENTER,WIDTH"), 2);
    }
    const qint64 memoryLimit = p.value(QStringLiteral("memory")).toLongLong(&ok) << 20;
    if (!ok || memoryLimit <= 0)
        return fail(QStringLiteral("reformat: --memory takes MiB"), 2);

    // Where the images are: files, or the cache (after a fetch from a store).
    QStringList names;
    Reader read = readFile;
    std::unique_ptr<FileStore> cache;
    if (QFileInfo::exists(input) && !p.isSet(QStringLiteral("store"))) {
        names = filesIn(input);
    } else {
        if (p.isSet(QStringLiteral("store"))) {
            Result<StoreConfigFile> config = loadConfig(p);
            if (!config.isOk())
                return fail(config.error().toString());
            Result<std::unique_ptr<StoreRegistry>> reg = registry(config.value(), true);
            if (!reg.isOk())
                return fail(reg.error().toString());
            Result<FetchSummary> fetched = runSync(reg.value()->fetchStudy(p.value(QStringLiteral("store")), input, FetchOptions::into(QString())));
            if (!fetched.isOk())
                return fail(QStringLiteral("fetching %1 from %2: %3").arg(input, p.value(QStringLiteral("store")), fetched.error().toString()));
        }
        auto opened = openCache();
        if (!opened.isOk())
            return fail(opened.error().toString());
        cache = std::move(opened.value());
        Result<QList<StudySummary>> studies = runSync(loadStudies(cache.get(), input));
        if (!studies.isOk())
            return fail(studies.error().toString());
        if (studies.value().size() > 1)
            return fail(QStringLiteral("reformat: study %1 is listed under %2 patients in the cache: not reformatted").arg(input).arg(studies.value().size()));
        for (const StudySummary &study : studies.value())
            for (const SeriesSummary &s : study.series)
                for (const InstanceRef &i : s.instances)
                    names << i.key;
        if (names.isEmpty())
            return fail(QStringLiteral("reformat: %1 is neither a file or folder nor a study in the cache").arg(input));
        FileStore *store = cache.get();
        read = [store](const QString &key) { return runSync(store->read(key)); };
    }

    // Headers first: the series and its geometry before any pixel is decoded.
    QElapsedTimer clock;
    clock.start();
    std::map<QString, QList<Source>> bySeries;
    int notImages = 0;
    for (const QString &name : std::as_const(names)) {
        Result<ByteView> bytes = read(name);
        if (!bytes.isOk())
            return fail(bytes.error().toString());
        Result<ImageInfo> info = readDicomImageInfo(bytes.value());
        if (!info.isOk() || info.value().rows <= 0) {
            ++notImages;
            continue;
        }
        bySeries[info.value().identity.seriesInstanceUid] << Source{name, info.value()};
    }
    if (bySeries.empty())
        return fail(QStringLiteral("reformat: no images in %1").arg(input));
    QString seriesUid = p.value(QStringLiteral("series"));
    if (seriesUid.isEmpty()) {
        qsizetype most = 0;
        for (const auto &[uid, sources] : bySeries) {
            qsizetype frames = 0;
            for (const Source &s : sources)
                frames += std::max(1, s.info.frames);
            if (frames > most)
                most = frames, seriesUid = uid;
        }
        if (bySeries.size() > 1)
            std::fprintf(stderr, "%zu series; reformatting %s (%s), the one with the most slices (--series to choose)\n", bySeries.size(), qPrintable(seriesUid),
                         qPrintable(bySeries[seriesUid].first().info.identity.seriesDescription));
    } else if (!bySeries.count(seriesUid)) {
        return fail(QStringLiteral("reformat: no series %1 in %2").arg(seriesUid, input));
    }
    const QList<Source> &sources = bySeries[seriesUid];
    // One patient only: a series whose images name different patients is not made into anything.
    for (const Source &s : sources)
        if (s.info.identity.patientId != sources.first().info.identity.patientId || s.info.identity.studyInstanceUid != sources.first().info.identity.studyInstanceUid)
            return fail(QStringLiteral("reformat: series %1 holds images of other patients or studies (%2 and %3): not reformatted")
                            .arg(seriesUid, sources.first().info.identity.patientId, s.info.identity.patientId));
    QList<VolumeSlice> slices;
    QList<int> sourceOf;
    for (int i = 0; i < sources.size(); ++i)
        for (const VolumeSlice &s : volumeSlices(sources[i].name, sources[i].info)) {
            slices << s;
            sourceOf << i;
        }
    const VolumeGeometry geometry = volumeGeometry(slices);
    if (!geometry.ok)
        return fail(QStringLiteral("reformat: series %1 is not one volume: %2").arg(seriesUid, geometry.refusal));
    QString spillFolder;
    if (cache)
        spillFolder = WorkstationPaths::cacheDirectory();
    Result<std::shared_ptr<Volume>> made = Volume::create(geometry, slices, memoryLimit, spillFolder);
    if (!made.isOk())
        return fail(QStringLiteral("reformat: series %1 is not one volume: %2").arg(seriesUid, made.error().message()));
    Volume &volume = *made.value();

    // The pixels, decoded on every core, each image's frames into their slots.
    QThreadPool pool;
    pool.setMaxThreadCount(QThread::idealThreadCount());
    QList<int> order(sources.size());
    std::iota(order.begin(), order.end(), 0);
    QHash<int, QList<int>> slicesOfSource;
    for (int s = 0; s < slices.size(); ++s)
        slicesOfSource[sourceOf[s]] << s;
    QtConcurrent::blockingMap(&pool, order, [&](int i) {
        Result<ByteView> bytes = read(sources[i].name);
        Result<DecodedImage> image = bytes.isOk() ? decodeDicom(bytes.value()) : Result<DecodedImage>(bytes.error());
        for (int s : slicesOfSource.value(i)) {
            if (!image.isOk())
                volume.refuse(s, image.error().message());
            else
                volume.fill(s, image.value().pixels, slices[s].frame);
        }
    });
    const double loadSeconds = clock.nsecsElapsed() / 1e9;

    // The plane.
    if (!p.isSet(QStringLiteral("at")))
        at = geometry.patientPoint((geometry.columns - 1) / 2.0, (geometry.rows - 1) / 2.0, (geometry.slotCount - 1) / 2.0);
    ReformatPlane plane = oblique ? planeThrough(geometry, at, rowDirection, columnDirection) : standardPlane(geometry, orientations.value(planeName), at);
    plane.slabThickness = wanted.slabThickness;
    plane.slabMode = wanted.slabMode;
    plane.interpolation = wanted.interpolation;
    clock.restart();
    const ReformattedImage r = reformat(volume, plane, &pool);
    const double cutSeconds = clock.nsecsElapsed() / 1e9;

    for (const QString &note : r.info.notes)
        std::fprintf(stderr, "note: %s\n", qPrintable(note));
    if (suffix == QLatin1String("dcm")) {
        // The derived image is made from the first slice in the volume: same patient, study and modality.
        int first = -1;
        for (int s = 0; s < geometry.slotCount && first < 0; ++s)
            if (geometry.slotSlice[s] >= 0 && volume.slotState(s) == SlotState::Filled)
                first = geometry.slotSlice[s];
        if (first < 0)
            return fail(QStringLiteral("reformat: no slice of series %1 could be decoded").arg(seriesUid));
        Result<ByteView> original = read(sources[sourceOf[first]].name);
        if (!original.isOk())
            return fail(original.error().toString());
        Derivation derivation;
        // In the default character repertoire (no Specific Character Set is written): the screen's "·" as a comma.
        const QString what = QString(r.description).replace(QStringLiteral(" · "), QStringLiteral(", "));
        derivation.description = QStringLiteral("Reformatted by Spectrum: %1").arg(what);
        derivation.seriesDescription = QStringLiteral("%1 (%2)").arg(sources.first().info.identity.seriesDescription, what).trimmed().left(64);
        DerivedPlane placed;
        placed.position = r.info.imagePosition;
        placed.orientation = r.info.imageOrientation;
        placed.rowSpacing = r.info.rowSpacing;
        placed.columnSpacing = r.info.columnSpacing;
        placed.sliceThickness = r.info.sliceThickness;
        placed.rescaleSlope = volume.rescaleSlope();
        placed.rescaleIntercept = volume.rescaleIntercept();
        if (!r.absence.isEmpty() && !r.paddingUnique)
            return fail(QStringLiteral("reformat: the plane's pixels use every 16-bit value, so those without a value (gaps, outside the volume) "
                                       "could not be told apart in a DICOM image: write a PNG, or cut a smaller plane"));
        if (!r.absence.isEmpty())
            placed.paddingValue = r.paddingValue;
        placed.imageTypeValues = {QStringLiteral("REFORMATTED")};
        if (r.slabSamples > 1)
            placed.imageTypeValues << (plane.slabMode == SlabMode::Mip ? QStringLiteral("MAX_IP") : plane.slabMode == SlabMode::MinIp ? QStringLiteral("MIN_IP") : QStringLiteral("AVERAGE"));
        for (const Source &s : sources)
            placed.sources << std::make_pair(s.info.identity.sopClassUid, s.info.identity.sopInstanceUid);
        derivation.plane = placed;
        Result<DerivedInstance> derived = makeDerivedInstance(original.value(), r.pixels, derivation);
        if (!derived.isOk())
            return fail(derived.error().toString());
        QSaveFile file(outPath);
        if (!file.open(QIODevice::WriteOnly) || file.write(derived.value().bytes) != derived.value().bytes.size() || !file.commit())
            return fail(QStringLiteral("cannot write %1: %2").arg(outPath, file.errorString()));
    } else {
        DecodedImage image{r.info, r.pixels};
        if (!p.isSet(QStringLiteral("window")))
            window = r.info.windows.isEmpty() ? minMaxWindow(image) : VoiWindow{r.info.windows.first().center, r.info.windows.first().width};
        PixelBuffer rendered = renderFrame(image, 0, window);
        hatchAbsent(rendered, r);
        if (Error e = writeImageFile(rendered, outPath); e.isError())
            return fail(e.toString());
    }
    out(QStringLiteral("%1: %2 × %3 pixels of %4 × %5 mm from %6 of %7 slices (series %8) → %9  [volume %10 s, plane %11 ms]")
            .arg(r.description).arg(r.pixels.width()).arg(r.pixels.height())
            .arg(QString::number(plane.columnSpacing, 'g', 4), QString::number(plane.rowSpacing, 'g', 4))
            .arg(volume.filledSlots()).arg(geometry.slotCount).arg(seriesUid, outPath)
            .arg(loadSeconds, 0, 'f', 2).arg(cutSeconds * 1e3, 0, 'f', 1));
    if (notImages > 0)
        std::fprintf(stderr, "%d file(s) were not images and were left out\n", notImages);
    return 0;
}

} // namespace

QList<Command> reformatCommands()
{
    return {{"reformat", "INPUT OUT [--plane axial|coronal|sagittal] [--at X,Y,Z] [--slab MM --mode mip|minip|average]",
             "a plane or slab projection (MPR) of a series as a derived DICOM image or PNG", cmdReformat}};
}

} // namespace spectrum::cli

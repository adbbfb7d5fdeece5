// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/demostudies.h"

#include "dcmtksupport.h"

#include "spectrum/core/uid.h"


#include <algorithm>
#include <cmath>
#include <vector>

namespace spectrum {

QList<DemoStudy> allDemoStudies()
{
    return {DemoStudy::HeadCt, DemoStudy::ChestCr, DemoStudy::HeadMr, DemoStudy::HeadCtPrior, DemoStudy::ChestCrPrior};
}


using namespace spectrum::dcmtk;

namespace {

constexpr double kPi = 3.14159265358979323846;

// One ellipsoid of the phantom, in normalised coordinates [-1, 1]³, rotated by phi about the z axis.
struct Ellipsoid
{
    double a, b, c;     // semi-axes
    double x0, y0, z0;  // centre
    double phiDeg;
    double ct;          // additive Hounsfield units
    double mr;          // additive T2-like signal
};

// Geometry of the 3-D modified Shepp–Logan head phantom (Kak & Slaney; Toft), our own CT/MR contrasts.
const Ellipsoid kHead[] = {
    {0.6900, 0.920, 0.810, 0.00, 0.000, 0.00, 0, 2000, 300},    // skull: −1000 + 2000 = 1000 HU
    {0.6624, 0.874, 0.780, 0.00, -0.0184, 0.00, 0, -960, 600},  // brain: 40 HU
    {0.1100, 0.310, 0.220, 0.22, 0.000, 0.00, -18, -35, 1400},  // ventricles: CSF ~5 HU, bright on T2
    {0.1600, 0.410, 0.280, -0.22, 0.000, 0.00, 18, -35, 1400},
    {0.2100, 0.250, 0.410, 0.00, 0.350, -0.15, 0, 25, 250},
    {0.0460, 0.046, 0.050, 0.00, 0.100, 0.25, 0, 30, 350},
    {0.0460, 0.046, 0.050, 0.00, -0.100, 0.25, 0, 30, 350},
    {0.0460, 0.023, 0.050, -0.08, -0.605, 0.00, 0, 45, 450},
    {0.0230, 0.023, 0.020, 0.00, -0.606, 0.00, 0, 45, 450},
    {0.0230, 0.046, 0.020, 0.06, -0.605, 0.00, 0, 45, 450},
};

// The lesion that changed between the two head CTs (right parietal, a little denser than brain; bright on T2):
// 9 mm across on the current CT and the MR, 6 mm on the prior a year earlier.
Ellipsoid lesion(double diameterMm)
{
    const double r = diameterMm / 2 / 125.0;  // normalised: the phantom's box is 250 mm across
    return {r, r, r, 0.30, -0.30, 0.12, 0, 30, 500};
}

// Small deterministic noise so the images look acquired and compress like real ones.
int noise(quint32 x, quint32 y, quint32 z, int amplitude)
{
    quint32 h = x * 73856093u ^ y * 19349663u ^ z * 83492791u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return int(h % quint32(2 * amplitude + 1)) - amplitude;
}

// Fills one axial slice of the phantom at normalised height z. `contrast` picks the CT or MR member.
void renderHeadSlice(std::vector<double> &out, int size, double z, double Ellipsoid::*contrast, double base, const Ellipsoid &extra)
{
    std::fill(out.begin(), out.end(), base);
    std::vector<Ellipsoid> parts(std::begin(kHead), std::end(kHead));
    parts.push_back(extra);
    for (const Ellipsoid &e : parts) {
        const double dz = (z - e.z0) / e.c;
        if (dz * dz >= 1)
            continue;
        const double scale = std::sqrt(1 - dz * dz);  // the ellipsoid's cross-section at this z
        const double a = e.a * scale, b = e.b * scale;
        const double cp = std::cos(e.phiDeg * kPi / 180), sp = std::sin(e.phiDeg * kPi / 180);
        const double value = e.*contrast;
        for (int row = 0; row < size; ++row) {
            // Rows run from anterior (top) to posterior: phantom y is up, so it decreases down the image.
            const double y = 1 - (row + 0.5) * 2.0 / size - e.y0;
            if (std::abs(y) > std::max(a, b))
                continue;
            double *line = out.data() + qsizetype(row) * size;
            for (int col = 0; col < size; ++col) {
                const double x = (col + 0.5) * 2.0 / size - 1 - e.x0;
                const double u = x * cp + y * sp, v = -x * sp + y * cp;
                if ((u * u) / (a * a) + (v * v) / (b * b) <= 1)
                    line[col] += value;
            }
        }
    }
}

void put(DcmItem *ds, const DcmTagKey &tag, const QString &value)
{
    ds->putAndInsertString(tag, value.toLatin1().constData());
}

struct CommonIdentity
{
    QString patientName, patientId, issuer = QStringLiteral("SPECTRUM DEMO"), birthDate, sex;
    QString studyUid, studyDate, studyTime, studyDescription, accession, studyId;
    QString seriesUid, seriesDescription, modality, frameOfReferenceUid, bodyPart;
    int seriesNumber = 1;
};

void putCommon(DcmItem *ds, const CommonIdentity &c, const QString &sopClassUid, const QString &sopInstanceUid,
               int instanceNumber)
{
    put(ds, DCM_SpecificCharacterSet, QStringLiteral("ISO_IR 100"));
    put(ds, DCM_SOPClassUID, sopClassUid);
    put(ds, DCM_SOPInstanceUID, sopInstanceUid);
    put(ds, DCM_PatientName, c.patientName);
    put(ds, DCM_PatientID, c.patientId);
    put(ds, DCM_IssuerOfPatientID, c.issuer);
    put(ds, DCM_PatientBirthDate, c.birthDate);
    put(ds, DCM_PatientSex, c.sex);
    put(ds, DCM_PatientComments, QStringLiteral("SYNTHETIC DEMO DATA - NOT A REAL PATIENT"));
    put(ds, DCM_StudyInstanceUID, c.studyUid);
    put(ds, DCM_StudyDate, c.studyDate);
    put(ds, DCM_StudyTime, c.studyTime);
    put(ds, DCM_StudyDescription, c.studyDescription);
    put(ds, DCM_AccessionNumber, c.accession);
    put(ds, DCM_StudyID, c.studyId);
    put(ds, DCM_ReferringPhysicianName, QString());
    put(ds, DCM_SeriesInstanceUID, c.seriesUid);
    put(ds, DCM_SeriesNumber, QString::number(c.seriesNumber));
    put(ds, DCM_SeriesDescription, c.seriesDescription);
    put(ds, DCM_Modality, c.modality);
    put(ds, DCM_BodyPartExamined, c.bodyPart);
    put(ds, DCM_SeriesDate, c.studyDate);
    put(ds, DCM_ContentDate, c.studyDate);
    put(ds, DCM_ContentTime, c.studyTime);
    put(ds, DCM_Manufacturer, QStringLiteral("Spectrum demo generator"));
    put(ds, DCM_InstitutionName, QStringLiteral("SPECTRUM DEMO"));
    put(ds, DCM_InstanceNumber, QString::number(instanceNumber));
    if (!c.frameOfReferenceUid.isEmpty()) {
        put(ds, DCM_FrameOfReferenceUID, c.frameOfReferenceUid);
        put(ds, DCM_PositionReferenceIndicator, QString());
    }
}

void putPixelModule(DcmItem *ds, int rows, int columns, int bitsStored, const QString &photometric,
                    const std::vector<Uint16> &pixels)
{
    ds->putAndInsertUint16(DCM_SamplesPerPixel, 1);
    put(ds, DCM_PhotometricInterpretation, photometric);
    ds->putAndInsertUint16(DCM_Rows, Uint16(rows));
    ds->putAndInsertUint16(DCM_Columns, Uint16(columns));
    ds->putAndInsertUint16(DCM_BitsAllocated, 16);
    ds->putAndInsertUint16(DCM_BitsStored, Uint16(bitsStored));
    ds->putAndInsertUint16(DCM_HighBit, Uint16(bitsStored - 1));
    ds->putAndInsertUint16(DCM_PixelRepresentation, 0);
    ds->putAndInsertUint16Array(DCM_PixelData, pixels.data(), static_cast<unsigned long>(pixels.size()));
}

QString fmt(double v) { return QString::number(v, 'g', 10); }

Result<DemoInstance> finish(DcmFileFormat &ff, const QString &path)
{
    Result<QByteArray> bytes = serialize(ff, EXS_LittleEndianExplicit);
    if (!bytes.isOk())
        return bytes.error();
    DemoInstance instance;
    instance.relativePath = path;
    instance.identity = readIdentity(ff.getDataset());
    instance.bytes = bytes.takeValue();
    return instance;
}

QString uidFor(const char *name) { return makeUidFromName(QByteArray("spectrum-demo/") + name); }

CommonIdentity headPatient()
{
    CommonIdentity c;
    c.patientName = QStringLiteral("DEMO^HEAD PHANTOM");
    c.patientId = QStringLiteral("DEMO-HEAD-001");
    c.birthDate = QStringLiteral("19700101");
    c.sex = QStringLiteral("O");
    c.bodyPart = QStringLiteral("HEAD");
    return c;
}

// What every demo CT image says of its acquisition and its values: the patient head first supine, 120 kV,
// stored values + −1024 = HU, in `imageType` ("…\\AXIAL", "…\\LOCALIZER").
void putCtImage(DcmItem *ds, const QString &imageType)
{
    put(ds, DCM_ImageType, imageType);
    put(ds, DCM_PatientPosition, QStringLiteral("HFS"));
    put(ds, DCM_KVP, QStringLiteral("120"));
    put(ds, DCM_RescaleIntercept, QStringLiteral("-1024"));
    put(ds, DCM_RescaleSlope, QStringLiteral("1"));
    put(ds, DCM_RescaleType, QStringLiteral("HU"));
}

// The head CT, or (`prior`) the same patient's head CT a year earlier: half as many slices, twice as thick, a
// smaller lesion, its own frame of reference, and the patient lying 12 mm further into the gantry (every Image
// Position 12 mm further along z for the same anatomy), as a prior usually lies.
Error generateHeadCt(const DemoOptions &opt, const std::function<Error(DemoInstance &&)> &sink, const CancelToken &cancel, bool prior)
{
    const QByteArray tag = prior ? "ct-prior" : "ct";
    CommonIdentity c = headPatient();
    c.studyUid = DemoArchive::studyUid(prior ? DemoStudy::HeadCtPrior : DemoStudy::HeadCt);
    c.studyDate = prior ? QStringLiteral("20230103") : QStringLiteral("20240102");
    c.studyTime = prior ? QStringLiteral("101500") : QStringLiteral("093000");
    c.studyDescription = QStringLiteral("DEMO CT HEAD (Shepp-Logan phantom)");
    c.accession = prior ? QStringLiteral("DEMO0004") : QStringLiteral("DEMO0001");
    c.studyId = prior ? QStringLiteral("4") : QStringLiteral("1");
    c.seriesUid = uidFor(tag + "/series/1");
    c.modality = QStringLiteral("CT");
    c.frameOfReferenceUid = uidFor(tag + "/frame-of-reference");

    constexpr int size = 512;
    constexpr double fov = 250.0;  // mm, across x, y and the whole z range
    const double spacing = fov / size;
    const int slices = prior ? std::max(1, opt.ctSlices / 2) : std::max(1, opt.ctSlices);
    const double sliceSpacing = fov / slices;
    const double tableShift = prior ? kDemoPriorShiftMm : 0.0;
    const Ellipsoid change = lesion(prior ? 6.0 : 9.0);
    c.seriesDescription = QStringLiteral("Axial %1 mm").arg(fmt(sliceSpacing));
    std::vector<double> hu(size_t(size) * size);
    std::vector<Uint16> stored(hu.size());
    const int slab = opt.ctSlabSlices > 1 && !prior ? opt.ctSlabSlices : 0;
    std::vector<int> slabSum(slab ? hu.size() : 0);
    CommonIdentity thick = c;
    thick.seriesUid = uidFor(tag + "/series/2");
    thick.seriesNumber = 2;
    thick.seriesDescription = QStringLiteral("Axial %1 mm").arg(fmt(slab * sliceSpacing));

    const double first = -fov / 2 + spacing / 2;
    // One axial CT slice of the series `id` at height z (mm), `thickness` thick, as a DICOM instance.
    auto write = [&](const CommonIdentity &id, const QByteArray &uidName, int number, double z, double thickness, const QString &path) -> Error {
        DcmFileFormat ff;
        DcmDataset *ds = ff.getDataset();
        putCommon(ds, id, QString::fromLatin1(UID_CTImageStorage), uidFor(uidName.constData()), number);
        putCtImage(ds, QStringLiteral("ORIGINAL\\PRIMARY\\AXIAL"));
        put(ds, DCM_ImagePositionPatient, QStringLiteral("%1\\%2\\%3").arg(fmt(first), fmt(first), fmt(z + tableShift)));
        put(ds, DCM_ImageOrientationPatient, QStringLiteral("1\\0\\0\\0\\1\\0"));
        put(ds, DCM_SliceLocation, fmt(z + tableShift));
        put(ds, DCM_SliceThickness, fmt(thickness));
        put(ds, DCM_PixelSpacing, QStringLiteral("%1\\%1").arg(fmt(spacing)));
        put(ds, DCM_WindowCenter, QStringLiteral("40\\500"));
        put(ds, DCM_WindowWidth, QStringLiteral("80\\2000"));
        put(ds, DCM_WindowCenterWidthExplanation, QStringLiteral("BRAIN\\BONE"));
        putPixelModule(ds, size, size, 12, QStringLiteral("MONOCHROME2"), stored);
        Result<DemoInstance> inst = finish(ff, path);
        if (!inst.isOk())
            return inst.error();
        return sink(inst.takeValue());
    };

    for (int k = 0; k < slices; ++k) {
        if (cancel.isCancelled())
            return Error(ErrorCode::Cancelled, QStringLiteral("demo generation cancelled"));
        const double zNorm = -1 + (k + 0.5) * 2.0 / slices;
        renderHeadSlice(hu, size, zNorm, &Ellipsoid::ct, -1000, change);
        for (size_t i = 0; i < hu.size(); ++i) {
            const int v = int(std::lround(hu[i])) + (hu[i] > -900 ? noise(quint32(i % size), quint32(i / size), quint32(k), 6) : 0);
            stored[i] = Uint16(std::clamp(v + 1024, 0, 4095));
        }
        if (Error e = write(c, tag + "/instance/" + QByteArray::number(k), k + 1, zNorm * fov / 2, sliceSpacing,
                           QStringLiteral("demo-%1/IM%2.dcm").arg(QString::fromLatin1(tag)).arg(k + 1, 4, 10, QLatin1Char('0')));
            e.isError())
            return e;
        if (!slab)
            continue;
        for (size_t i = 0; i < stored.size(); ++i)
            slabSum[i] += stored[i];
        if (k % slab != slab - 1)
            continue;
        // The thick slice: the mean of the slab's thin slices, centred on them.
        const int j = k / slab;
        for (size_t i = 0; i < stored.size(); ++i)
            stored[i] = Uint16((slabSum[i] + slab / 2) / slab);
        std::fill(slabSum.begin(), slabSum.end(), 0);
        const double zCentre = (-1 + (k + 1 - slab / 2.0) * 2.0 / slices) * fov / 2;
        if (Error e = write(thick, "ct/thick-instance/" + QByteArray::number(j), j + 1, zCentre, slab * sliceSpacing,
                           QStringLiteral("demo-ct/thick/IM%1.dcm").arg(j + 1, 4, 10, QLatin1Char('0')));
            e.isError())
            return e;
    }
    if (prior || !opt.ctLocalizer)
        return Error();

    // The lateral localiser: the mean attenuation along x through the head, 256 × 256 over the same 250 mm, in the
    // sagittal plane x = 0 (rows run down the patient, columns to the back), as a scanner's scout is taken first.
    constexpr int n = 256;
    const double scoutSpacing = fov / n;
    std::vector<double> row(size_t(n) * n);
    std::vector<double> mean(size_t(n) * n);
    for (int r = 0; r < n; ++r) {
        if (cancel.isCancelled())
            return Error(ErrorCode::Cancelled, QStringLiteral("demo generation cancelled"));
        renderHeadSlice(row, n, 1 - (r + 0.5) * 2.0 / n, &Ellipsoid::ct, -1000, change);
        for (int j = 0; j < n; ++j) {  // y, front to back
            double sum = 0;
            for (int i = 0; i < n; ++i)
                sum += row[size_t(j) * n + size_t(i)];
            mean[size_t(r) * n + size_t(j)] = sum / n;
        }
    }
    std::vector<Uint16> scout(mean.size());
    for (size_t i = 0; i < mean.size(); ++i)
        scout[i] = Uint16(std::clamp(int(std::lround(mean[i])) + 1024, 0, 4095));
    CommonIdentity localizer = c;
    localizer.seriesUid = uidFor(tag + "/series/3");
    localizer.seriesNumber = 3;
    localizer.seriesDescription = QStringLiteral("Localizer lateral");
    DcmFileFormat ff;
    DcmDataset *ds = ff.getDataset();
    putCommon(ds, localizer, QString::fromLatin1(UID_CTImageStorage), uidFor((tag + "/localizer").constData()), 1);
    putCtImage(ds, QStringLiteral("ORIGINAL\\PRIMARY\\LOCALIZER"));
    put(ds, DCM_ImagePositionPatient, QStringLiteral("0\\%1\\%2").arg(fmt(-fov / 2 + scoutSpacing / 2), fmt(fov / 2 - scoutSpacing / 2)));
    put(ds, DCM_ImageOrientationPatient, QStringLiteral("0\\1\\0\\0\\0\\-1"));
    put(ds, DCM_PixelSpacing, QStringLiteral("%1\\%1").arg(fmt(scoutSpacing)));
    put(ds, DCM_WindowCenter, QStringLiteral("-500"));
    put(ds, DCM_WindowWidth, QStringLiteral("1000"));
    putPixelModule(ds, n, n, 12, QStringLiteral("MONOCHROME2"), scout);
    Result<DemoInstance> inst = finish(ff, QStringLiteral("demo-ct/localizer/IM0001.dcm"));
    if (!inst.isOk())
        return inst.error();
    return sink(inst.takeValue());
}

Error generateHeadMr(const DemoOptions &opt, const std::function<Error(DemoInstance &&)> &sink, const CancelToken &cancel)
{
    CommonIdentity c = headPatient();
    c.studyUid = DemoArchive::studyUid(DemoStudy::HeadMr);
    c.studyDate = QStringLiteral("20240215");
    c.studyTime = QStringLiteral("141500");
    c.studyDescription = QStringLiteral("DEMO MR HEAD T2 (Shepp-Logan phantom)");
    c.accession = QStringLiteral("DEMO0003");
    c.studyId = QStringLiteral("3");
    c.seriesUid = uidFor("mr/series/1");
    c.seriesDescription = QStringLiteral("T2 axial");
    c.modality = QStringLiteral("MR");
    c.frameOfReferenceUid = uidFor("mr/frame-of-reference");

    constexpr int size = 256;
    constexpr double fov = 250.0;
    const double spacing = fov / size;
    const int slices = std::max(1, opt.mrSlices);
    const double zFrom = -0.6, zTo = 0.6;  // the brain, not the whole head box
    const double sliceSpacingMm = (zTo - zFrom) / slices * fov / 2;
    std::vector<double> signal(size_t(size) * size);
    std::vector<Uint16> stored(signal.size());

    for (int k = 0; k < slices; ++k) {
        if (cancel.isCancelled())
            return Error(ErrorCode::Cancelled, QStringLiteral("demo generation cancelled"));
        const double zNorm = zFrom + (k + 0.5) * (zTo - zFrom) / slices;
        renderHeadSlice(signal, size, zNorm, &Ellipsoid::mr, 0, lesion(9.0));
        for (size_t i = 0; i < signal.size(); ++i) {
            const int v = int(std::lround(signal[i])) + 40 + noise(quint32(i % size), quint32(i / size), quint32(k) + 7777u, 25);
            stored[i] = Uint16(std::clamp(v, 0, 4095));
        }
        DcmFileFormat ff;
        DcmDataset *ds = ff.getDataset();
        putCommon(ds, c, QString::fromLatin1(UID_MRImageStorage), uidFor(QByteArray("mr/instance/" + QByteArray::number(k)).constData()), k + 1);
        put(ds, DCM_ImageType, QStringLiteral("ORIGINAL\\PRIMARY\\M\\ND"));
        put(ds, DCM_PatientPosition, QStringLiteral("HFS"));
        put(ds, DCM_ScanningSequence, QStringLiteral("SE"));
        put(ds, DCM_SequenceVariant, QStringLiteral("NONE"));
        put(ds, DCM_ScanOptions, QString());
        put(ds, DCM_MRAcquisitionType, QStringLiteral("2D"));
        put(ds, DCM_EchoTime, QStringLiteral("100"));
        put(ds, DCM_RepetitionTime, QStringLiteral("4000"));
        put(ds, DCM_EchoTrainLength, QStringLiteral("16"));
        put(ds, DCM_MagneticFieldStrength, QStringLiteral("1.5"));
        const double zMm = zNorm * fov / 2;
        const double first = -fov / 2 + spacing / 2;
        put(ds, DCM_ImagePositionPatient, QStringLiteral("%1\\%2\\%3").arg(fmt(first), fmt(first), fmt(zMm)));
        put(ds, DCM_ImageOrientationPatient, QStringLiteral("1\\0\\0\\0\\1\\0"));
        put(ds, DCM_SliceLocation, fmt(zMm));
        put(ds, DCM_SliceThickness, fmt(sliceSpacingMm));
        put(ds, DCM_PixelSpacing, QStringLiteral("%1\\%1").arg(fmt(spacing)));
        put(ds, DCM_WindowCenter, QStringLiteral("1000"));
        put(ds, DCM_WindowWidth, QStringLiteral("2000"));
        putPixelModule(ds, size, size, 12, QStringLiteral("MONOCHROME2"), stored);
        Result<DemoInstance> inst = finish(ff, QStringLiteral("demo-mr/IM%1.dcm").arg(k + 1, 4, 10, QLatin1Char('0')));
        if (!inst.isOk())
            return inst.error();
        if (Error e = sink(inst.takeValue()); e.isError())
            return e;
    }
    return Error();
}

double cap(double x, double y, double cx, double cy, double a, double b)
{
    const double r = ((x - cx) * (x - cx)) / (a * a) + ((y - cy) * (y - cy)) / (b * b);
    return r < 1 ? std::sqrt(1 - r) : 0.0;
}

// Attenuation path lengths of a PA chest at (x, y): body, lungs, mediastinum, spine, ribs, clavicles. `heart`
// scales the heart (the prior's is a little smaller).
double chestPa(double x, double y, double heart)
{
    double att = 1.0 * cap(x, y, 0, 0.15, 0.78, 1.1);                        // body
    const double lungs = cap(x, y, -0.33, -0.05, 0.26, 0.55) + cap(x, y, 0.33, -0.05, 0.26, 0.55);
    att -= 0.55 * lungs;
    att += 0.45 * cap(x, y, 0.07, 0.22, 0.24 * heart, 0.28 * heart);         // heart
    if (std::abs(x) < 0.055 && y > -0.95)
        att += 0.35;                                                          // spine
    att += 0.5 * cap(x, y, 0, 0.95, 0.7, 0.35);                               // diaphragm / abdomen
    if (lungs > 0) {
        for (int r = 0; r < 9; ++r) {                                         // ribs
            const double yr = -0.55 + r * 0.12 + 0.35 * x * x;
            if (std::abs(y - yr) < 0.018)
                att += 0.12;
        }
    }
    if (std::abs(y - (-0.62 + 0.12 * std::abs(x))) < 0.02 && std::abs(x) > 0.06 && std::abs(x) < 0.45)
        att += 0.2;                                                           // clavicles
    return att;
}

// The left lateral: anterior to the left of the image, posterior to the right (Patient Orientation P\F).
double chestLateral(double x, double y, double heart)
{
    double att = 1.25 * cap(x, y, 0, 0.15, 0.62, 1.1);                       // body, deeper than wide
    const double lungs = cap(x, y, 0.02, -0.05, 0.42, 0.58);                  // both lungs, one over the other
    att -= 0.8 * lungs;
    att += 0.5 * cap(x, y, -0.18, 0.25, 0.25 * heart, 0.27 * heart);         // heart, anterior
    att += 0.7 * cap(x, y, 0.42, 0.1, 0.09, 1.0);                             // spine, posterior
    att += 0.12 * cap(x, y, -0.55, -0.1, 0.05, 0.7);                          // sternum
    att += 0.5 * cap(x, y, 0, 0.98, 0.6, 0.33);                               // diaphragm / abdomen
    return att;
}

// A chest radiograph (PA or lateral; `prior`: the one a year earlier) as a CR instance. Stored values grow with
// exposure, so air is high; MONOCHROME1 shows it dark and bone bright.
Error generateChestView(const std::function<Error(DemoInstance &&)> &sink, bool prior, bool lateral)
{
    const QByteArray tag = prior ? "cr-prior" : "cr";
    CommonIdentity c;
    c.patientName = QStringLiteral("DEMO^CHEST PHANTOM");
    c.patientId = QStringLiteral("DEMO-CHEST-002");
    c.birthDate = QStringLiteral("19800615");
    c.sex = QStringLiteral("O");
    c.bodyPart = QStringLiteral("CHEST");
    c.studyUid = DemoArchive::studyUid(prior ? DemoStudy::ChestCrPrior : DemoStudy::ChestCr);
    c.studyDate = prior ? QStringLiteral("20230109") : QStringLiteral("20240110");
    c.studyTime = prior ? QStringLiteral("081000") : QStringLiteral("110500");
    c.studyDescription = QStringLiteral("DEMO CR CHEST PA+LAT (synthetic)");
    c.accession = prior ? QStringLiteral("DEMO0005") : QStringLiteral("DEMO0002");
    c.studyId = prior ? QStringLiteral("5") : QStringLiteral("2");
    c.seriesUid = uidFor(tag + (lateral ? "/series/2" : "/series/1"));
    c.seriesNumber = lateral ? 2 : 1;
    c.seriesDescription = lateral ? QStringLiteral("LAT") : QStringLiteral("PA");
    c.modality = QStringLiteral("CR");

    constexpr int columns = 2048, rows = 2500;
    constexpr double spacing = 0.168;
    const double heart = prior ? 0.93 : 1.0;
    const double shift = prior ? 0.03 : 0.0;  // the prior's patient stood a little to one side
    std::vector<Uint16> stored(size_t(columns) * rows);
    for (int row = 0; row < rows; ++row) {
        const double y = (row + 0.5) * 2.0 / rows - 1;  // −1 top (neck) … +1 bottom (abdomen)
        for (int col = 0; col < columns; ++col) {
            const double x = ((col + 0.5) * 2.0 / columns - 1) * columns / double(rows) - shift;
            const double att = lateral ? chestLateral(x, y, heart) : chestPa(x, y, heart);
            const int v = int(std::lround(3900 - att * 2300)) + noise(quint32(col), quint32(row), prior ? 4343u : lateral ? 4244u : 4242u, 12);
            stored[size_t(row) * columns + col] = Uint16(std::clamp(v, 0, 4095));
        }
    }
    DcmFileFormat ff;
    DcmDataset *ds = ff.getDataset();
    putCommon(ds, c, QString::fromLatin1(UID_ComputedRadiographyImageStorage), uidFor(tag + (lateral ? "/instance/1" : "/instance/0")), 1);
    put(ds, DCM_ImageType, QStringLiteral("ORIGINAL\\PRIMARY"));
    put(ds, DCM_ViewPosition, lateral ? QStringLiteral("LL") : QStringLiteral("PA"));
    put(ds, DCM_PatientOrientation, lateral ? QStringLiteral("P\\F") : QStringLiteral("L\\F"));
    put(ds, DCM_PixelSpacing, QStringLiteral("%1\\%1").arg(fmt(spacing)));
    put(ds, DCM_ImagerPixelSpacing, QStringLiteral("%1\\%1").arg(fmt(spacing)));
    put(ds, DCM_WindowCenter, QStringLiteral("2300"));
    put(ds, DCM_WindowWidth, QStringLiteral("3400"));
    putPixelModule(ds, rows, columns, 12, QStringLiteral("MONOCHROME1"), stored);
    Result<DemoInstance> inst = finish(ff, QStringLiteral("demo-%1/%2.dcm").arg(QString::fromLatin1(tag), lateral ? QStringLiteral("IM0002") : QStringLiteral("IM0001")));
    if (!inst.isOk())
        return inst.error();
    return sink(inst.takeValue());
}

// The PA and the lateral of one chest study.
Error generateChestCr(const std::function<Error(DemoInstance &&)> &sink, const CancelToken &cancel, bool prior)
{
    for (bool lateral : {false, true}) {
        if (cancel.isCancelled())
            return Error(ErrorCode::Cancelled, QStringLiteral("demo generation cancelled"));
        if (Error e = generateChestView(sink, prior, lateral); e.isError())
            return e;
    }
    return Error();
}

} // namespace

QString DemoArchive::studyUid(DemoStudy study)
{
    switch (study) {
    case DemoStudy::HeadCt: return uidFor("ct/study");
    case DemoStudy::ChestCr: return uidFor("cr/study");
    case DemoStudy::HeadMr: return uidFor("mr/study");
    case DemoStudy::HeadCtPrior: return uidFor("ct-prior/study");
    case DemoStudy::ChestCrPrior: return uidFor("cr-prior/study");
    }
    return QString();
}

QString DemoArchive::alias(DemoStudy study)
{
    switch (study) {
    case DemoStudy::HeadCt: return QStringLiteral("demo-ct");
    case DemoStudy::ChestCr: return QStringLiteral("demo-cr");
    case DemoStudy::HeadMr: return QStringLiteral("demo-mr");
    case DemoStudy::HeadCtPrior: return QStringLiteral("demo-ct-prior");
    case DemoStudy::ChestCrPrior: return QStringLiteral("demo-cr-prior");
    }
    return QString();
}

std::optional<DemoStudy> DemoArchive::fromAlias(const QString &alias)
{
    for (DemoStudy s : allDemoStudies()) {
        if (alias.compare(DemoArchive::alias(s), Qt::CaseInsensitive) == 0)
            return s;
    }
    return std::nullopt;
}

int DemoArchive::instanceCount(const DemoOptions &options)
{
    int n = 0;
    for (DemoStudy s : options.studies)
        switch (s) {
        case DemoStudy::HeadCt:
            n += options.ctSlices + (options.ctSlabSlices > 1 ? options.ctSlices / options.ctSlabSlices : 0) + (options.ctLocalizer ? 1 : 0);
            break;
        case DemoStudy::HeadCtPrior: n += std::max(1, options.ctSlices / 2); break;
        case DemoStudy::HeadMr: n += options.mrSlices; break;
        case DemoStudy::ChestCr:
        case DemoStudy::ChestCrPrior: n += 2; break;
        }
    return n;
}

Error DemoArchive::generate(const DemoOptions &options, const std::function<Error(DemoInstance &&)> &sink,
                            const CancelToken &cancel)
{
    for (DemoStudy s : options.studies) {
        Error e;
        switch (s) {
        case DemoStudy::HeadCt: e = generateHeadCt(options, sink, cancel, false); break;
        case DemoStudy::HeadCtPrior: e = generateHeadCt(options, sink, cancel, true); break;
        case DemoStudy::ChestCr: e = generateChestCr(sink, cancel, false); break;
        case DemoStudy::ChestCrPrior: e = generateChestCr(sink, cancel, true); break;
        case DemoStudy::HeadMr: e = generateHeadMr(options, sink, cancel); break;
        }
        if (e.isError())
            return e;
    }
    return Error();
}

} // namespace spectrum

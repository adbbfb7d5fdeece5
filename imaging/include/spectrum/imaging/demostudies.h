// SPDX-License-Identifier: Apache-2.0
#pragma once
// The embedded demo archive: synthetic studies written as valid DICOM through DCMTK, so a fresh workstation
// has something real to read, and tests and benchmarks have realistic data.
//
//  - Head CT: 3-D modified Shepp–Logan phantom, 512 × 512 × 200 slices, 16-bit Hounsfield units
//    (stored + intercept −1024), 1.25 mm slices with consistent Image Position / Orientation / Pixel Spacing;
//    optionally (ctSlabSlices) a thick-slice series of the same volume in the same frame of reference.
//  - Chest CR: a PA and a lateral, 2048 × 2500 16-bit projections, MONOCHROME1 (minimum is white, as CR plates
//    often are).
//  - Head MR: T2-like 256 × 256 × 24 slices of the same phantom.
//  - Priors, a year earlier, to read against: the head CT (half the slices, twice as thick, its own frame of
//    reference, the patient 12 mm further along z, the lesion smaller) and the chest PA + lateral (the heart a
//    little smaller, the patient a little to the side).
//
// Everything is deterministic: the same options give byte-identical files on every machine, with UIDs derived
// from names (core/uid.h). Identities are plainly fake: names "DEMO^…", IDs "DEMO-…", a comment that says so.

#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/job.h"
#include "spectrum/core/result.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <functional>
#include <optional>

namespace spectrum {

enum class DemoStudy { HeadCt, ChestCr, HeadMr, HeadCtPrior, ChestCrPrior };

/// How much further along z (mm) the prior head CT's patient lay than the current one's: the same anatomy has
/// Image Positions this much greater.
inline constexpr double kDemoPriorShiftMm = 12.0;

/// Every demo study, in the order they are listed.
QList<DemoStudy> allDemoStudies();

struct DemoOptions
{
    QList<DemoStudy> studies = allDemoStudies();
    int ctSlices = 200;
    /// With N > 1, the head CT has a second series in the same frame of reference: every N thin slices averaged
    /// into one thick slice ("Axial 5 mm" for N = 4), as scanners reconstruct both. 0: the thin series alone.
    int ctSlabSlices = 0;
    /// The head CT has a lateral localiser too (a sagittal projection through the head, 256², series 3, in its
    /// frame of reference): the image the axial slices are drawn on as reference lines.
    bool ctLocalizer = false;
    int mrSlices = 24;
};

struct DemoInstance
{
    QString relativePath;  ///< "demo-ct/IM0001.dcm": where `spectrum-cli demo --out` writes it
    QByteArray bytes;      ///< a DICOM Part 10 file, explicit VR little endian
    DicomIdentity identity;
};

class DemoArchive
{
public:
    /// The Study Instance UID of a demo study (stable across versions and machines).
    static QString studyUid(DemoStudy study);
    /// "demo-ct", "demo-cr", "demo-mr", "demo-ct-prior", "demo-cr-prior": short names users can type instead of a UID.
    static QString alias(DemoStudy study);
    static std::optional<DemoStudy> fromAlias(const QString &alias);
    static int instanceCount(const DemoOptions &options);

    /// Generates every instance in order and hands each to `sink` on the calling thread. Stops at the first
    /// error the sink returns, or with ErrorCode::Cancelled when `cancel` is set. Blocking; thread-safe.
    static Error generate(const DemoOptions &options, const std::function<Error(DemoInstance &&)> &sink,
                          const CancelToken &cancel = CancelToken());
};

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
// The readers of DICOM documents on any bytes: Structured Reports (readStructuredReport), Key Object Selections,
// Grayscale Softcopy Presentation States, and the de-identifier (which rewrites whatever it parses). Each reads or
// says why not; never crashes, hangs or leaks — and what the de-identifier writes is DICOM it can read again.
#include "fuzztarget.h"

#include "spectrum/imaging/documents/deidentify.h"
#include "spectrum/imaging/documents/keyobjects.h"
#include "spectrum/imaging/documents/measurementreport.h"
#include "spectrum/imaging/documents/presentationstate.h"

#include <QByteArray>

#include <cstdlib>

SPECTRUM_FUZZ_TARGET(dicomdocuments)
{
    using namespace spectrum;
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    if (Result<ReadReport> r = readStructuredReport(ByteView(bytes)); r.isOk())
        for (const ReportedFinding &f : r.value().findings)
            (void)describeValues(f.values);
    (void)readKeyObjectSelection(ByteView(bytes));
    (void)readPresentationState(ByteView(bytes));
    UidMap uids;
    if (Result<DeidentifiedInstance> d = deidentify(ByteView(bytes), DeidentifyOptions(), uids); d.isOk()) {
        UidMap again;
        if (!deidentify(ByteView(d.value().bytes), DeidentifyOptions(), again).isOk())
            std::abort();  // it wrote something it cannot read back
    }
    return 0;
}

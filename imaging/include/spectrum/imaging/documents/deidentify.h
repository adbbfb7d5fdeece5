// SPDX-License-Identifier: Apache-2.0
#pragma once
// A de-identified copy of DICOM instances: DICOM PS3.15 Annex E, the Basic Application Level Confidentiality
// Profile, with the Clean Structured Content and Clean Graphics options (reports, key images and presentation states
// keep their content and graphics, cleaned attribute by attribute: the people in them replaced, their free text
// listed for the reader) and, on request, the Retain Longitudinal Temporal Information with Full Dates option.
//
// Every attribute of Table E.1-1 (all of it, as of PS3.15 2024b: basicprofile.cpp) is removed, emptied, given a dummy
// value or a new UID as it says — at any depth, in sequences too; where the table leaves the choice to the
// attribute's type in the IOD (X/Z, Z/D, X/D, X/Z/D) the choice that conforms whatever the type is taken (empty,
// or a dummy); a sequence given a dummy keeps its items with every value in them a dummy; private attributes,
// overlays and curves are removed; a person's name the table does not list is replaced all the same. Every UID the
// table lists (study, series, instance, frame of reference, references…) is replaced by a new one — the same new one
// for the same old one throughout an export (UidMap), so the references inside the exported study still resolve,
// and a different one in every export. The pixel data is copied unchanged:
// an image whose pixels may show who the patient is (Burned In Annotation YES, or a modality that usually burns
// text in and does not say) is flagged, never passed as clean silently.

#include "spectrum/core/bytes.h"
#include "spectrum/core/result.h"

#include <QHash>
#include <QString>
#include <QStringList>

namespace spectrum {

struct DeidentifyOptions
{
    bool retainDates = false;          ///< Retain Longitudinal Temporal Information with Full Dates
    QString patientName;               ///< the copy's Patient's Name; empty: "ANONYMOUS"
    QString patientId;                 ///< the copy's Patient ID; empty: a pseudonym from the original, fixed per export
};

/// Old UID → new UID for one export (and the pseudonyms it gives): the same answer for the same question, and
/// answers no other export can link back.
class UidMap
{
public:
    UidMap();
    QString map(const QString &uid);
    QString pseudonym(const QString &patientId);
    int size() const { return int(m_uids.size()); }

private:
    QByteArray m_secret;
    QHash<QString, QString> m_uids;
};

struct DeidentifiedInstance
{
    QByteArray bytes;                  ///< DICOM Part 10
    QString sopInstanceUid;            ///< its new SOP Instance UID
    QString originalSopInstanceUid;
    /// Why its pixels may still show who the patient is (empty: no reason known). Said to the reader, not hidden.
    QString burnedInWarning;
    /// Free text kept (report texts, key image notes, annotation words), the patient's names, IDs, accession number
    /// and birth date replaced in it where written as such: to be read before sharing all the same.
    QStringList textsKept;
};

/// De-identifies one instance (a whole Part 10 file). InvalidDicom when it is not DICOM.
Result<DeidentifiedInstance> deidentify(const ByteView &dicom, const DeidentifyOptions &options, UidMap &uids);

/// What DeidentificationMethod says of the options (for summaries and tests).
QString deidentificationMethod(const DeidentifyOptions &options);

} // namespace spectrum

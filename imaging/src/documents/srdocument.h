// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the Structured Report writers share (measurement reports, key object selections): the text's character set,
// and a new document's patient, study and series. Only .cpp files of imaging include this.

#include "spectrum/core/dicomidentity.h"
#include "spectrum/core/result.h"

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmsr/dsrdoc.h>

#include <QStringList>

namespace spectrum::srdoc {

OFString ascii(const QString &s);

/// How other software's documents are read: leniently (rules a reader does not need may be broken), what is not
/// understood then said by the reader itself.
inline const size_t kLenientRead = DSRTypes::RF_acceptUnknownRelationshipType | DSRTypes::RF_acceptInvalidContentItemValue
                                 | DSRTypes::RF_ignoreRelationshipConstraints | DSRTypes::RF_skipInvalidContentItems;

/// A document's text in its character set: Latin-1 (ISO_IR 100) when every text fits it — DCMTK's checkers read that
/// fully —, UTF-8 (ISO_IR 192) otherwise.
struct Encoder
{
    bool utf8 = false;
    OFString operator()(const QString &s) const { return OFString(utf8 ? s.toUtf8().constData() : s.toLatin1().constData()); }
};

/// `doc` (new) made a document of `study`'s study in a new series: its character set chosen for `texts` (with the
/// study's own), the patient and study from `study`, the series' description and number, the instance number, the
/// manufacturer. InvalidArgument when the study UID is not usable.
Result<Encoder> startDocument(DSRDocument &doc, const DicomIdentity &study, QStringList texts, const QString &seriesDescription, int seriesNumber,
                              int instanceNumber);

} // namespace spectrum::srdoc

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The coded concepts our Structured Reports use and recognise (DCMTK's DCM and UCUM tables, and the SNOMED CT codes
// TID 1500 asks for, which DCMTK's short SCT table lacks). Only .cpp files of imaging include this.

#include "spectrum/imaging/tools/annotation.h"

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmsr/codes/dcm.h>
#include <dcmtk/dcmsr/codes/sct.h>
#include <dcmtk/dcmsr/codes/ucum.h>
#include <dcmtk/dcmsr/dsrcodvl.h>

#include <optional>

namespace spectrum::srcodes {

inline DSRCodedEntryValue sct(const char *code, const char *meaning)
{
    return DSRCodedEntryValue(code, "SCT", meaning);
}

/// Length, Long Axis…: the concept of a NUM for `q` (regions' statistics are the modality's quantity with a
/// Derivation, see derivationOf).
DSRCodedEntryValue conceptOf(Quantity q);
/// Mean, Standard Deviation, Minimum, Maximum: the Derivation modifier's value.
std::optional<DSRCodedEntryValue> derivationOf(Quantity q);
/// The quantity a region's statistics are of, for `modality`: attenuation coefficient (CT), MR signal intensity,
/// or the modality pixel value (our own coding scheme: no standard concept fits every modality).
DSRCodedEntryValue pixelQuantity(const QString &unitUcum, const QString &modality);

/// The Quantity a NUM's concept (and its Derivation modifier, when any) names; SNOMED CT and the retired SNOMED
/// RT codes both, then the meaning's words for the codes of other schemes.
std::optional<Quantity> quantityOf(const DSRCodedEntryValue &concept, const DSRCodedEntryValue *derivation);

bool same(const DSRCodedEntryValue &a, const DSRBasicCodedEntry &b);
bool same(const DSRCodedEntryValue &a, const DSRCodedEntryValue &b);

} // namespace spectrum::srcodes

// SPDX-License-Identifier: Apache-2.0
#pragma once
// DICOM PS3.15 Annex E, Table E.1-1: what the Basic Application Level Confidentiality Profile does to each
// attribute, and which of the profile's options keep (Retain Longitudinal Temporal Information with Full Dates) or
// clean instead (Clean Structured Content, Clean Graphics) what it would remove.

#include <QtGlobal>

namespace spectrum::basicprofile {

/// The Basic Profile's column. Where the table gives a choice (X/Z, Z/D, …) the standard lets the attribute's type
/// in the object's IOD decide; deidentify.cpp takes the choice that conforms whatever that type is.
enum class Action : char {
    X,    ///< remove
    Z,    ///< empty (or a dummy when needed)
    D,    ///< a dummy value of its VR
    U,    ///< a new UID, the same for the same old one within the export
    XZ,   ///< X unless Type 2: Z
    XD,   ///< X unless Type 1: D
    ZD,   ///< Z unless Type 1: D
    XZD,  ///< X unless Type 1 or 2: D or Z
    XZU,  ///< X unless Type 1 or 2: Z, or the sequence kept with its UIDs replaced (U*)
};

/// The options whose column says K (kept) or C (cleaned) for the attribute.
enum Option : unsigned char {
    None = 0,
    Dates = 1,     ///< Retain Longitudinal Temporal Information with Full Dates: K
    Content = 2,   ///< Clean Structured Content: C
    Graphics = 4,  ///< Clean Graphics: C
};

struct Rule
{
    quint32 tag;  ///< group << 16 | element
    Action action;
    unsigned char options;
};

/// The rule of one attribute; nullptr when the table does not list it. The table's repeating groups (curves 50xx,
/// overlays 60xx) and private attributes are rules of their own in deidentify.cpp.
const Rule *ruleFor(quint16 group, quint16 element);

/// Every listed attribute (for tests and the fuzz target).
int ruleCount();

} // namespace spectrum::basicprofile

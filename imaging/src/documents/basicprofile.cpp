// SPDX-License-Identifier: Apache-2.0
#include "documents/basicprofile.h"

#include <algorithm>
#include <iterator>

namespace spectrum::basicprofile {

namespace {

constexpr Action X = Action::X, Z = Action::Z, D = Action::D, U = Action::U, XZ = Action::XZ, XD = Action::XD, ZD = Action::ZD,
                 XZD = Action::XZD, XZU = Action::XZU;

// Transcribed from PS3.15 Table E.1-1 of 2024b (the Basic Profile column and the K/C of the Retain Longitudinal Full
// Dates, Clean Structured Content and Clean Graphics options), with the 36 attributes the table gained up to 2026d
// (marked "since 2024b": patients' names to use, pronouns, gender identity and sex parameters, diagnoses, …; their
// Full Dates K from the Modified Dates column, which says C exactly where Full Dates says K; Unformatted Text Value's
// Clean Graphics C taken as the Graphic Annotation Sequence's that holds it), sorted by tag. The repeating groups and
// private attributes are left to the code. tests/support/deid_check.py checks what deidentify() does against
// another transcription of the table (dicom-anonymizer's, 2026c).
const Rule kRules[] = {
    {0x00001000, X, 0}, // Affected SOP Instance UID
    {0x00001001, U, 0}, // Requested SOP Instance UID
    {0x00020003, U, 0}, // Media Storage SOP Instance UID
    {0x00041511, U, 0}, // Referenced SOP Instance UID in File
    {0x00080012, XD, Dates}, // Instance Creation Date
    {0x00080013, XZD, Dates}, // Instance Creation Time
    {0x00080014, U, 0}, // Instance Creator UID
    {0x00080015, X, Dates}, // Instance Coercion DateTime
    {0x00080017, U, 0}, // Acquisition UID
    {0x00080018, U, 0}, // SOP Instance UID
    {0x00080019, U, 0}, // Pyramid UID
    {0x00080020, Z, Dates}, // Study Date
    {0x00080021, XD, Dates}, // Series Date
    {0x00080022, XZ, Dates}, // Acquisition Date
    {0x00080023, ZD, Dates}, // Content Date
    {0x00080024, X, Dates}, // Overlay Date
    {0x00080025, X, Dates}, // Curve Date
    {0x0008002A, XZD, Dates}, // Acquisition DateTime
    {0x00080030, Z, Dates}, // Study Time
    {0x00080031, XD, Dates}, // Series Time
    {0x00080032, XZ, Dates}, // Acquisition Time
    {0x00080033, ZD, Dates}, // Content Time
    {0x00080034, X, Dates}, // Overlay Time
    {0x00080035, X, Dates}, // Curve Time
    {0x00080050, Z, 0}, // Accession Number
    {0x00080054, X, 0}, // Retrieve AE Title
    {0x00080055, X, 0}, // Station AE Title
    {0x00080058, U, 0}, // Failed SOP Instance UID List
    {0x00080080, XZD, 0}, // Institution Name
    {0x00080081, X, 0}, // Institution Address
    {0x00080082, XZD, 0}, // Institution Code Sequence
    {0x00080090, Z, 0}, // Referring Physician's Name
    {0x00080092, X, 0}, // Referring Physician's Address
    {0x00080094, X, 0}, // Referring Physician's Telephone Numbers
    {0x00080096, X, 0}, // Referring Physician Identification Sequence
    {0x0008009C, Z, 0}, // Consulting Physician's Name
    {0x0008009D, X, 0}, // Consulting Physician Identification Sequence
    {0x00080106, D, Dates}, // Context Group Version
    {0x00080107, D, Dates}, // Context Group Local Version
    {0x00080201, X, Dates}, // Timezone Offset From UTC
    {0x00081000, X, 0}, // Network ID
    {0x00081010, XZD, 0}, // Station Name
    {0x00081030, X, 0}, // Study Description
    {0x0008103E, X, 0}, // Series Description
    {0x00081040, X, 0}, // Institutional Department Name
    {0x00081041, X, 0}, // Institutional Department Type Code Sequence
    {0x00081048, X, 0}, // Physician(s) of Record
    {0x00081049, X, 0}, // Physician(s) of Record Identification Sequence
    {0x00081050, X, 0}, // Performing Physician's Name
    {0x00081052, X, 0}, // Performing Physician Identification Sequence
    {0x00081060, X, 0}, // Name of Physician(s) Reading Study
    {0x00081062, X, 0}, // Physician(s) Reading Study Identification Sequence
    {0x00081070, XZD, 0}, // Operators' Name
    {0x00081072, XD, 0}, // Operator Identification Sequence
    {0x00081080, X, 0}, // Admitting Diagnoses Description
    {0x00081084, X, 0}, // Admitting Diagnoses Code Sequence
    {0x00081088, X, 0}, // Pyramid Description
    {0x00081110, XZ, 0}, // Referenced Study Sequence
    {0x00081111, XZD, 0}, // Referenced Performed Procedure Step Sequence
    {0x00081120, X, 0}, // Referenced Patient Sequence
    {0x00081140, XZU, 0}, // Referenced Image Sequence
    {0x00081155, U, 0}, // Referenced SOP Instance UID
    {0x00081195, U, 0}, // Transaction UID
    {0x00081301, X, 0}, // Principal Diagnosis Code Sequence (since 2024b)
    {0x00081302, X, 0}, // Primary Diagnosis Code Sequence (since 2024b)
    {0x00081303, X, 0}, // Secondary Diagnoses Code Sequence (since 2024b)
    {0x00081304, X, 0}, // Histological Diagnoses Code Sequence (since 2024b)
    {0x00082111, X, 0}, // Derivation Description
    {0x00082112, XZU, 0}, // Source Image Sequence
    {0x00083010, U, 0}, // Irradiation Event UID
    {0x00084000, X, 0}, // Identifying Comments
    {0x00100010, Z, 0}, // Patient's Name
    {0x00100011, X, 0}, // Person Names to Use Sequence (since 2024b)
    {0x00100012, X, 0}, // Name to Use (since 2024b)
    {0x00100013, X, 0}, // Name to Use Comment (since 2024b)
    {0x00100014, X, 0}, // Third Person Pronouns Sequence (since 2024b)
    {0x00100015, X, 0}, // Pronoun Code Sequence (since 2024b)
    {0x00100016, X, 0}, // Pronoun Comment (since 2024b)
    {0x00100020, ZD, 0}, // Patient ID
    {0x00100021, X, 0}, // Issuer of Patient ID
    {0x00100030, Z, 0}, // Patient's Birth Date
    {0x00100032, X, 0}, // Patient's Birth Time
    {0x00100040, Z, 0}, // Patient's Sex
    {0x00100041, X, 0}, // Gender Identity Sequence (since 2024b)
    {0x00100042, X, 0}, // Sex Parameters for Clinical Use Category Comment (since 2024b)
    {0x00100043, X, 0}, // Sex Parameters for Clinical Use Category Sequence (since 2024b)
    {0x00100044, X, 0}, // Gender Identity Code Sequence (since 2024b)
    {0x00100045, X, 0}, // Gender Identity Comment (since 2024b)
    {0x00100046, X, 0}, // Sex Parameters for Clinical Use Category Code Sequence (since 2024b)
    {0x00100047, X, 0}, // Sex Parameters for Clinical Use Category Reference (since 2024b)
    {0x00100050, X, 0}, // Patient's Insurance Plan Code Sequence
    {0x00100101, X, 0}, // Patient's Primary Language Code Sequence
    {0x00100102, X, 0}, // Patient's Primary Language Modifier Code Sequence
    {0x00101000, X, 0}, // Other Patient IDs
    {0x00101001, X, 0}, // Other Patient Names
    {0x00101002, X, 0}, // Other Patient IDs Sequence
    {0x00101005, X, 0}, // Patient's Birth Name
    {0x00101010, X, 0}, // Patient's Age
    {0x00101020, X, 0}, // Patient's Size
    {0x00101030, X, 0}, // Patient's Weight
    {0x00101040, X, 0}, // Patient's Address
    {0x00101050, X, 0}, // Insurance Plan Identification
    {0x00101060, X, 0}, // Patient's Mother's Birth Name
    {0x00101080, X, 0}, // Military Rank
    {0x00101081, X, 0}, // Branch of Service
    {0x00101090, X, 0}, // Medical Record Locator
    {0x00101100, X, 0}, // Referenced Patient Photo Sequence
    {0x00102000, X, 0}, // Medical Alerts
    {0x00102110, X, 0}, // Allergies
    {0x00102150, X, 0}, // Country of Residence
    {0x00102152, X, 0}, // Region of Residence
    {0x00102154, X, 0}, // Patient's Telephone Numbers
    {0x00102155, X, 0}, // Patient's Telecom Information
    {0x00102160, X, 0}, // Ethnic Group
    {0x00102161, X, 0}, // Ethnic Group Code Sequence (since 2024b)
    {0x00102162, X, 0}, // Ethnic Groups (since 2024b)
    {0x00102180, X, 0}, // Occupation
    {0x001021A0, X, 0}, // Smoking Status
    {0x001021B0, X, 0}, // Additional Patient History
    {0x001021C0, X, 0}, // Pregnancy Status
    {0x001021D0, X, Dates}, // Last Menstrual Date
    {0x001021F0, X, 0}, // Patient's Religious Preference
    {0x00102203, XZ, 0}, // Patient's Sex Neutered
    {0x00102297, X, 0}, // Responsible Person
    {0x00102299, X, 0}, // Responsible Organization
    {0x00104000, X, 0}, // Patient Comments
    {0x00120010, D, 0}, // Clinical Trial Sponsor Name
    {0x00120020, D, 0}, // Clinical Trial Protocol ID
    {0x00120021, Z, 0}, // Clinical Trial Protocol Name
    {0x00120022, X, 0}, // Issuer of Clinical Trial Protocol ID
    {0x00120023, X, 0}, // Other Clinical Trial Protocol IDs Sequence
    {0x00120030, Z, 0}, // Clinical Trial Site ID
    {0x00120031, Z, 0}, // Clinical Trial Site Name
    {0x00120032, X, 0}, // Issuer of Clinical Trial Site ID
    {0x00120040, D, 0}, // Clinical Trial Subject ID
    {0x00120041, X, 0}, // Issuer of Clinical Trial Subject ID
    {0x00120042, D, 0}, // Clinical Trial Subject Reading ID
    {0x00120043, X, 0}, // Issuer of Clinical Trial Subject Reading ID
    {0x00120050, Z, 0}, // Clinical Trial Time Point ID
    {0x00120051, X, 0}, // Clinical Trial Time Point Description
    {0x00120055, X, 0}, // Issuer of Clinical Trial Time Point ID
    {0x00120060, Z, 0}, // Clinical Trial Coordinating Center Name
    {0x00120071, X, 0}, // Clinical Trial Series ID
    {0x00120072, X, 0}, // Clinical Trial Series Description
    {0x00120073, X, 0}, // Issuer of Clinical Trial Series ID
    {0x00120081, D, 0}, // Clinical Trial Protocol Ethics Committee Name
    {0x00120082, X, 0}, // Clinical Trial Protocol Ethics Committee Approval Number
    {0x00120086, X, Dates}, // Ethics Committee Approval Effectiveness Start Date
    {0x00120087, X, Dates}, // Ethics Committee Approval Effectiveness End Date
    {0x0014407C, X, Dates}, // Calibration Time
    {0x0014407E, X, Dates}, // Calibration Date
    {0x0016002B, X, 0}, // Maker Note
    {0x0016004B, X, 0}, // Device Setting Description
    {0x0016004D, X, 0}, // Camera Owner Name
    {0x0016004E, X, 0}, // Lens Specification
    {0x0016004F, X, 0}, // Lens Make
    {0x00160050, X, 0}, // Lens Model
    {0x00160051, X, 0}, // Lens Serial Number
    {0x00160070, X, 0}, // GPS Version ID
    {0x00160071, X, 0}, // GPS Latitude Ref
    {0x00160072, X, 0}, // GPS Latitude
    {0x00160073, X, 0}, // GPS Longitude Ref
    {0x00160074, X, 0}, // GPS Longitude
    {0x00160075, X, 0}, // GPS Altitude Ref
    {0x00160076, X, 0}, // GPS Altitude
    {0x00160077, X, 0}, // GPS Time Stamp
    {0x00160078, X, 0}, // GPS Satellites
    {0x00160079, X, 0}, // GPS Status
    {0x0016007A, X, 0}, // GPS Measure Mode
    {0x0016007B, X, 0}, // GPS DOP
    {0x0016007C, X, 0}, // GPS Speed Ref
    {0x0016007D, X, 0}, // GPS Speed
    {0x0016007E, X, 0}, // GPS Track Ref
    {0x0016007F, X, 0}, // GPS Track
    {0x00160080, X, 0}, // GPS Img Direction Ref
    {0x00160081, X, 0}, // GPS Img Direction
    {0x00160082, X, 0}, // GPS Map Datum
    {0x00160083, X, 0}, // GPS Dest Latitude Ref
    {0x00160084, X, 0}, // GPS Dest Latitude
    {0x00160085, X, 0}, // GPS Dest Longitude Ref
    {0x00160086, X, 0}, // GPS Dest Longitude
    {0x00160087, X, 0}, // GPS Dest Bearing Ref
    {0x00160088, X, 0}, // GPS Dest Bearing
    {0x00160089, X, 0}, // GPS Dest Distance Ref
    {0x0016008A, X, 0}, // GPS Dest Distance
    {0x0016008B, X, 0}, // GPS Processing Method
    {0x0016008C, X, 0}, // GPS Area Information
    {0x0016008D, X, Dates}, // GPS Date Stamp
    {0x0016008E, X, 0}, // GPS Differential
    {0x00180010, ZD, 0}, // Contrast/Bolus Agent
    {0x00180027, X, Dates}, // Intervention Drug Stop Time
    {0x00180035, X, Dates}, // Intervention Drug Start Time
    {0x00181000, XZD, 0}, // Device Serial Number
    {0x00181002, U, 0}, // Device UID
    {0x00181004, X, 0}, // Plate ID
    {0x00181005, X, 0}, // Generator ID
    {0x00181007, X, 0}, // Cassette ID
    {0x00181008, X, 0}, // Gantry ID
    {0x00181009, X, 0}, // Unique Device Identifier
    {0x0018100A, X, 0}, // UDI Sequence
    {0x0018100B, U, 0}, // Manufacturer's Device Class UID
    {0x00181010, X, 0}, // Secondary Capture Device ID (since 2024b)
    {0x00181011, X, 0}, // Hardcopy Creation Device ID (since 2024b)
    {0x00181012, X, Dates}, // Date of Secondary Capture
    {0x00181014, X, Dates}, // Time of Secondary Capture
    {0x00181030, XD, 0}, // Protocol Name
    {0x00181042, X, Dates}, // Contrast/Bolus Start Time
    {0x00181043, X, Dates}, // Contrast/Bolus Stop Time
    {0x00181072, X, Dates}, // Radiopharmaceutical Start Time
    {0x00181073, X, Dates}, // Radiopharmaceutical Stop Time
    {0x00181078, X, Dates}, // Radiopharmaceutical Start DateTime
    {0x00181079, X, Dates}, // Radiopharmaceutical Stop DateTime
    {0x001811BB, D, 0}, // Acquisition Field Of View Label
    {0x00181200, X, Dates}, // Date of Last Calibration
    {0x00181201, X, Dates}, // Time of Last Calibration
    {0x00181202, X, Dates}, // DateTime of Last Calibration
    {0x00181203, Z, Dates}, // Calibration DateTime
    {0x00181204, X, Dates}, // Date of Manufacture
    {0x00181205, X, Dates}, // Date of Installation
    {0x00181400, XD, 0}, // Acquisition Device Processing Description
    {0x00182042, U, 0}, // Target UID
    {0x00184000, X, 0}, // Acquisition Comments
    {0x00185011, X, 0}, // Transducer Identification Sequence
    {0x0018700A, XD, 0}, // Detector ID
    {0x0018700C, XD, Dates}, // Date of Last Detector Calibration
    {0x0018700E, XD, Dates}, // Time of Last Detector Calibration
    {0x00189074, D, Dates}, // Frame Acquisition DateTime
    {0x00189151, D, Dates}, // Frame Reference DateTime
    {0x00189185, X, 0}, // Respiratory Motion Compensation Technique Description
    {0x00189367, D, 0}, // X-Ray Source ID
    {0x00189369, D, Dates}, // Source Start DateTime
    {0x0018936A, D, Dates}, // Source End DateTime
    {0x00189371, D, 0}, // X-Ray Detector ID
    {0x00189373, X, 0}, // X-Ray Detector Label
    {0x0018937B, X, 0}, // Multi-energy Acquisition Description
    {0x0018937F, X, 0}, // Decomposition Description
    {0x00189424, X, 0}, // Acquisition Protocol Description
    {0x00189516, XD, Dates}, // Start Acquisition DateTime
    {0x00189517, XD, Dates}, // End Acquisition DateTime
    {0x00189623, D, Dates}, // Functional Sync Pulse
    {0x00189701, D, Dates}, // Decay Correction DateTime
    {0x00189804, D, Dates}, // Exclusion Start DateTime
    {0x00189919, ZD, Dates}, // Instruction Performed DateTime
    {0x00189937, X, 0}, // Requested Series Description
    {0x0018A002, X, Dates}, // Contribution DateTime
    {0x0018A003, X, 0}, // Contribution Description
    {0x0020000D, U, 0}, // Study Instance UID
    {0x0020000E, U, 0}, // Series Instance UID
    {0x00200010, Z, 0}, // Study ID
    {0x00200027, X, 0}, // Pyramid Label
    {0x00200052, U, 0}, // Frame of Reference UID
    {0x00200200, U, 0}, // Synchronization Frame of Reference UID
    {0x00203401, X, 0}, // Modifying Device ID
    {0x00203403, X, Dates}, // Modified Image Date
    {0x00203405, X, Dates}, // Modified Image Time
    {0x00203406, X, 0}, // Modified Image Description
    {0x00204000, X, 0}, // Image Comments
    {0x00209158, X, 0}, // Frame Comments
    {0x00209161, U, 0}, // Concatenation UID
    {0x00209164, U, 0}, // Dimension Organization UID
    {0x00281199, U, 0}, // Palette Color Lookup Table UID
    {0x00281214, U, 0}, // Large Palette Color Lookup Table UID
    {0x00284000, X, 0}, // Image Presentation Comments
    {0x00320012, X, 0}, // Study ID Issuer
    {0x00320032, X, Dates}, // Study Verified Date
    {0x00320033, X, Dates}, // Study Verified Time
    {0x00320034, X, Dates}, // Study Read Date
    {0x00320035, X, Dates}, // Study Read Time
    {0x00321000, X, Dates}, // Scheduled Study Start Date
    {0x00321001, X, Dates}, // Scheduled Study Start Time
    {0x00321010, X, Dates}, // Scheduled Study Stop Date
    {0x00321011, X, Dates}, // Scheduled Study Stop Time
    {0x00321020, X, 0}, // Scheduled Study Location
    {0x00321021, X, 0}, // Scheduled Study Location AE Title
    {0x00321030, X, 0}, // Reason for Study
    {0x00321032, X, 0}, // Requesting Physician
    {0x00321033, X, 0}, // Requesting Service
    {0x00321040, X, Dates}, // Study Arrival Date
    {0x00321041, X, Dates}, // Study Arrival Time
    {0x00321050, X, Dates}, // Study Completion Date
    {0x00321051, X, Dates}, // Study Completion Time
    {0x00321060, XZ, 0}, // Requested Procedure Description
    {0x00321066, X, 0}, // Reason for Visit
    {0x00321067, X, 0}, // Reason for Visit Code Sequence
    {0x00321070, X, 0}, // Requested Contrast Agent
    {0x00324000, X, 0}, // Study Comments
    {0x00340001, D, 0}, // Flow Identifier Sequence
    {0x00340002, D, 0}, // Flow Identifier
    {0x00340005, D, 0}, // Source Identifier
    {0x00340007, D, Dates}, // Frame Origin Timestamp
    {0x00380004, X, 0}, // Referenced Patient Alias Sequence
    {0x00380010, X, 0}, // Admission ID
    {0x00380011, X, 0}, // Issuer of Admission ID
    {0x00380014, X, 0}, // Issuer of Admission ID Sequence
    {0x0038001A, X, Dates}, // Scheduled Admission Date
    {0x0038001B, X, Dates}, // Scheduled Admission Time
    {0x0038001C, X, Dates}, // Scheduled Discharge Date
    {0x0038001D, X, Dates}, // Scheduled Discharge Time
    {0x0038001E, X, 0}, // Scheduled Patient Institution Residence
    {0x00380020, X, Dates}, // Admitting Date
    {0x00380021, X, Dates}, // Admitting Time
    {0x00380030, X, Dates}, // Discharge Date
    {0x00380032, X, Dates}, // Discharge Time
    {0x00380040, X, 0}, // Discharge Diagnosis Description
    {0x00380050, X, 0}, // Special Needs
    {0x00380060, X, 0}, // Service Episode ID
    {0x00380061, X, 0}, // Issuer of Service Episode ID
    {0x00380062, X, 0}, // Service Episode Description
    {0x00380064, X, 0}, // Issuer of Service Episode ID Sequence
    {0x00380300, X, 0}, // Current Patient Location
    {0x00380400, X, 0}, // Patient's Institution Residence
    {0x00380500, X, 0}, // Patient State
    {0x00384000, X, 0}, // Visit Comments
    {0x003A0020, X, 0}, // Multiplex Group Label (since 2024b)
    {0x003A0203, X, 0}, // Channel Label (since 2024b)
    {0x003A020C, X, 0}, // Channel Derivation Description (since 2024b)
    {0x003A0310, U, 0}, // Multiplex Group UID
    {0x003A0314, D, Dates}, // Impedance Measurement DateTime
    {0x003A0329, X, 0}, // Waveform Filter Description
    {0x003A032B, X, 0}, // Filter Lookup Table Description
    {0x00400001, X, 0}, // Scheduled Station AE Title
    {0x00400002, X, Dates}, // Scheduled Procedure Step Start Date
    {0x00400003, X, Dates}, // Scheduled Procedure Step Start Time
    {0x00400004, X, Dates}, // Scheduled Procedure Step End Date
    {0x00400005, X, Dates}, // Scheduled Procedure Step End Time
    {0x00400006, X, 0}, // Scheduled Performing Physician's Name
    {0x00400007, X, 0}, // Scheduled Procedure Step Description
    {0x00400009, X, 0}, // Scheduled Procedure Step ID
    {0x0040000B, X, 0}, // Scheduled Performing Physician Identification Sequence
    {0x00400010, X, 0}, // Scheduled Station Name
    {0x00400011, X, 0}, // Scheduled Procedure Step Location
    {0x00400012, X, 0}, // Pre-Medication
    {0x00400241, X, 0}, // Performed Station AE Title
    {0x00400242, X, 0}, // Performed Station Name
    {0x00400243, X, 0}, // Performed Location
    {0x00400244, X, Dates}, // Performed Procedure Step Start Date
    {0x00400245, X, Dates}, // Performed Procedure Step Start Time
    {0x00400250, X, Dates}, // Performed Procedure Step End Date
    {0x00400251, X, Dates}, // Performed Procedure Step End Time
    {0x00400253, X, 0}, // Performed Procedure Step ID
    {0x00400254, X, 0}, // Performed Procedure Step Description
    {0x00400275, X, 0}, // Request Attributes Sequence
    {0x00400280, X, 0}, // Comments on the Performed Procedure Step
    {0x00400310, X, 0}, // Comments on Radiation Dose
    {0x0040050A, X, 0}, // Specimen Accession Number
    {0x00400512, D, 0}, // Container Identifier
    {0x00400513, Z, 0}, // Issuer of the Container Identifier Sequence
    {0x0040051A, X, 0}, // Container Description
    {0x00400551, D, 0}, // Specimen Identifier
    {0x00400554, U, 0}, // Specimen UID
    {0x00400555, XZ, Content}, // Acquisition Context Sequence
    {0x00400556, X, 0}, // Acquisition Context Description (since 2024b)
    {0x00400562, Z, 0}, // Issuer of the Specimen Identifier Sequence
    {0x00400600, X, 0}, // Specimen Short Description
    {0x00400602, X, 0}, // Specimen Detailed Description
    {0x00400610, Z, Content}, // Specimen Preparation Sequence
    {0x004006FA, X, 0}, // Slide Identifier
    {0x00401001, X, 0}, // Requested Procedure ID
    {0x00401002, X, 0}, // Reason for the Requested Procedure
    {0x00401004, X, 0}, // Patient Transport Arrangements
    {0x00401005, X, 0}, // Requested Procedure Location
    {0x0040100A, X, 0}, // Reason for Requested Procedure Code Sequence
    {0x00401010, X, 0}, // Names of Intended Recipients of Results
    {0x00401011, X, 0}, // Intended Recipients of Results Identification Sequence
    {0x00401101, D, 0}, // Person Identification Code Sequence
    {0x00401102, X, 0}, // Person's Address
    {0x00401103, X, 0}, // Person's Telephone Numbers
    {0x00401104, X, 0}, // Person's Telecom Information
    {0x00401400, X, 0}, // Requested Procedure Comments
    {0x00402001, X, 0}, // Reason for the Imaging Service Request
    {0x00402004, X, Dates}, // Issue Date of Imaging Service Request
    {0x00402005, X, Dates}, // Issue Time of Imaging Service Request
    {0x00402008, X, 0}, // Order Entered By
    {0x00402009, X, 0}, // Order Enterer's Location
    {0x00402010, X, 0}, // Order Callback Phone Number
    {0x00402011, X, 0}, // Order Callback Telecom Information
    {0x00402016, Z, 0}, // Placer Order Number / Imaging Service Request
    {0x00402017, Z, 0}, // Filler Order Number / Imaging Service Request
    {0x00402400, X, 0}, // Imaging Service Request Comments
    {0x00403001, X, 0}, // Confidentiality Constraint on Patient Data Description
    {0x00404005, X, Dates}, // Scheduled Procedure Step Start DateTime
    {0x00404008, X, Dates}, // Scheduled Procedure Step Expiration DateTime
    {0x00404010, X, Dates}, // Scheduled Procedure Step Modification DateTime
    {0x00404011, X, Dates}, // Expected Completion DateTime
    {0x00404023, U, 0}, // Referenced General Purpose Scheduled Procedure Step Transaction UID
    {0x00404025, X, 0}, // Scheduled Station Name Code Sequence
    {0x00404027, X, 0}, // Scheduled Station Geographic Location Code Sequence
    {0x00404028, X, 0}, // Performed Station Name Code Sequence
    {0x00404030, X, 0}, // Performed Station Geographic Location Code Sequence
    {0x00404034, X, 0}, // Scheduled Human Performers Sequence
    {0x00404035, X, 0}, // Actual Human Performers Sequence
    {0x00404036, X, 0}, // Human Performer's Organization
    {0x00404037, X, 0}, // Human Performer's Name
    {0x00404050, X, Dates}, // Performed Procedure Step Start DateTime
    {0x00404051, X, Dates}, // Performed Procedure Step End DateTime
    {0x00404052, X, Dates}, // Procedure Step Cancellation DateTime
    {0x0040A023, X, Dates}, // Findings Group Recording Date (Trial)
    {0x0040A024, X, Dates}, // Findings Group Recording Time (Trial)
    {0x0040A027, D, 0}, // Verifying Organization
    {0x0040A030, D, Dates}, // Verification DateTime
    {0x0040A032, XD, Dates}, // Observation DateTime
    {0x0040A033, X, Dates}, // Observation Start DateTime
    {0x0040A034, X, Dates}, // Effective Start DateTime (since 2024b)
    {0x0040A035, X, Dates}, // Effective Stop DateTime (since 2024b)
    {0x0040A073, D, 0}, // Verifying Observer Sequence
    {0x0040A075, D, 0}, // Verifying Observer Name
    {0x0040A078, X, 0}, // Author Observer Sequence
    {0x0040A07A, X, 0}, // Participant Sequence
    {0x0040A07C, X, 0}, // Custodial Organization Sequence
    {0x0040A082, Z, Dates}, // Participation DateTime
    {0x0040A088, Z, 0}, // Verifying Observer Identification Code Sequence
    {0x0040A110, X, Dates}, // Date of Document or Verbal Transaction (Trial)
    {0x0040A112, X, Dates}, // Time of Document Creation or Verbal Transaction (Trial)
    {0x0040A120, D, Dates}, // DateTime
    {0x0040A121, D, Dates}, // Date
    {0x0040A122, D, Dates}, // Time
    {0x0040A123, D, 0}, // Person Name
    {0x0040A124, U, 0}, // UID
    {0x0040A13A, D, Dates}, // Referenced DateTime
    {0x0040A171, U, 0}, // Observation UID
    {0x0040A172, U, 0}, // Referenced Observation UID (Trial)
    {0x0040A192, X, Dates}, // Observation Date (Trial)
    {0x0040A193, X, Dates}, // Observation Time (Trial)
    {0x0040A307, X, 0}, // Current Observer (Trial)
    {0x0040A352, X, 0}, // Verbal Source (Trial)
    {0x0040A353, X, 0}, // Address (Trial)
    {0x0040A354, X, 0}, // Telephone Number (Trial)
    {0x0040A358, X, 0}, // Verbal Source Identifier Code Sequence (Trial)
    {0x0040A402, U, 0}, // Observation Subject UID (Trial)
    {0x0040A730, D, Content}, // Content Sequence
    {0x0040B020, XD, 0}, // Waveform Annotation Sequence (since 2024b)
    {0x0040B034, X, Dates}, // Annotation DateTime (since 2024b)
    {0x0040B036, X, Dates}, // Segment Definition DateTime (since 2024b)
    {0x0040B03B, X, 0}, // Montage Name (since 2024b)
    {0x0040B03F, X, 0}, // Montage Channel Label (since 2024b)
    {0x0040DB06, X, Dates}, // Template Version
    {0x0040DB07, X, Dates}, // Template Local Version
    {0x0040DB0C, U, 0}, // Template Extension Organization UID
    {0x0040DB0D, U, 0}, // Template Extension Creator UID
    {0x0040E004, X, Dates}, // HL7 Document Effective Time
    {0x0040E012, X, 0}, // Display URI (since 2024b)
    {0x00420011, D, 0}, // Encapsulated Document
    {0x00440004, X, Dates}, // Approval Status DateTime
    {0x0044000B, X, Dates}, // Product Expiration DateTime
    {0x00440010, X, Dates}, // Substance Administration DateTime
    {0x00440104, D, Dates}, // Assertion DateTime
    {0x00440105, X, Dates}, // Assertion Expiration DateTime
    {0x0050001B, X, 0}, // Container Component ID
    {0x00500020, X, 0}, // Device Description
    {0x00500021, X, 0}, // Long Device Description
    {0x00620021, U, 0}, // Tracking UID
    {0x00640003, U, 0}, // Source Frame of Reference UID
    {0x00686226, D, Dates}, // Effective DateTime
    {0x00686270, D, Dates}, // Information Issue DateTime
    {0x006A0003, D, 0}, // Annotation Group UID
    {0x006A0005, D, 0}, // Annotation Group Label
    {0x006A0006, X, 0}, // Annotation Group Description
    {0x00700001, D, Graphics}, // Graphic Annotation Sequence
    {0x00700006, D, Graphics}, // Unformatted Text Value (since 2024b)
    {0x00700082, X, Dates}, // Presentation Creation Date
    {0x00700083, X, Dates}, // Presentation Creation Time
    {0x00700084, ZD, 0}, // Content Creator's Name
    {0x00700086, X, 0}, // Content Creator's Identification Code Sequence
    {0x0070031A, U, 0}, // Fiducial UID
    {0x00701101, U, 0}, // Presentation Display Collection UID
    {0x00701102, U, 0}, // Presentation Sequence Collection UID
    {0x0072000A, D, Dates}, // Hanging Protocol Creation DateTime
    {0x0072005E, D, 0}, // Selector AE Value
    {0x0072005F, D, 0}, // Selector AS Value
    {0x00720061, D, Dates}, // Selector DA Value
    {0x00720063, D, Dates}, // Selector DT Value
    {0x00720065, D, 0}, // Selector OB Value
    {0x00720066, D, 0}, // Selector LO Value
    {0x00720068, D, 0}, // Selector LT Value
    {0x0072006A, D, 0}, // Selector PN Value
    {0x0072006B, D, Dates}, // Selector TM Value
    {0x0072006C, D, 0}, // Selector SH Value
    {0x0072006D, D, 0}, // Selector UN Value
    {0x0072006E, D, 0}, // Selector ST Value
    {0x00720070, D, 0}, // Selector UT Value
    {0x00720071, D, 0}, // Selector UR Value
    {0x00741234, X, 0}, // Receiving AE
    {0x00741236, X, 0}, // Requesting AE
    {0x00880140, U, 0}, // Storage Media File-set UID
    {0x00880200, X, 0}, // Icon Image Sequence (see Note 11)
    {0x00880904, X, 0}, // Topic Title
    {0x00880906, X, 0}, // Topic Subject
    {0x00880910, X, 0}, // Topic Author
    {0x00880912, X, 0}, // Topic Keywords
    {0x01000420, X, Dates}, // SOP Authorization DateTime
    {0x04000100, U, 0}, // Digital Signature UID
    {0x04000105, D, Dates}, // Digital Signature DateTime
    {0x04000115, D, 0}, // Certificate of Signer
    {0x04000310, X, Dates}, // Certified Timestamp
    {0x04000402, X, 0}, // Referenced Digital Signature Sequence
    {0x04000403, X, 0}, // Referenced SOP Instance MAC Sequence
    {0x04000404, X, 0}, // MAC
    {0x04000550, X, 0}, // Modified Attributes Sequence
    {0x04000551, X, 0}, // Nonconforming Modified Attributes Sequence
    {0x04000552, X, 0}, // Nonconforming Data Element Value
    {0x04000561, X, 0}, // Original Attributes Sequence
    {0x04000562, D, Dates}, // Attribute Modification DateTime
    {0x04000563, D, 0}, // Modifying System
    {0x04000564, Z, 0}, // Source of Previous Values
    {0x04000565, D, 0}, // Reason for the Attribute Modification
    {0x04000600, X, 0}, // Instance Origin Status
    {0x20300020, X, 0}, // Text String
    {0x21000040, X, Dates}, // Creation Date
    {0x21000050, X, Dates}, // Creation Time
    {0x21000070, X, 0}, // Originator
    {0x21000140, D, 0}, // Destination AE
    {0x22000002, XZ, 0}, // Label Text
    {0x22000005, XZ, 0}, // Barcode Value
    {0x30020121, X, 0}, // Position Acquisition Template Name
    {0x30020123, X, 0}, // Position Acquisition Template Description
    {0x3004007F, X, 0}, // Dose Calculation Model Name (since 2024b)
    {0x30060002, D, 0}, // Structure Set Label
    {0x30060004, X, 0}, // Structure Set Name
    {0x30060006, X, 0}, // Structure Set Description
    {0x30060008, Z, Dates}, // Structure Set Date
    {0x30060009, Z, Dates}, // Structure Set Time
    {0x30060024, U, 0}, // Referenced Frame of Reference UID
    {0x30060026, Z, 0}, // ROI Name
    {0x30060028, X, 0}, // ROI Description
    {0x3006002D, X, Dates}, // ROI DateTime
    {0x3006002E, X, Dates}, // ROI Observation DateTime
    {0x30060038, X, 0}, // ROI Generation Description
    {0x3006004D, X, 0}, // ROI Creator Sequence
    {0x3006004E, X, 0}, // ROI Interpreter Sequence
    {0x30060085, X, 0}, // ROI Observation Label
    {0x30060088, X, 0}, // ROI Observation Description
    {0x300600A6, Z, 0}, // ROI Interpreter
    {0x300600C2, U, 0}, // Related Frame of Reference UID
    {0x30080024, D, Dates}, // Treatment Control Point Date
    {0x30080025, D, Dates}, // Treatment Control Point Time
    {0x30080054, XD, Dates}, // First Treatment Date
    {0x30080056, XD, Dates}, // Most Recent Treatment Date
    {0x30080105, XZ, 0}, // Source Serial Number
    {0x30080162, D, Dates}, // Safe Position Exit Date
    {0x30080164, D, Dates}, // Safe Position Exit Time
    {0x30080166, D, Dates}, // Safe Position Return Date
    {0x30080168, D, Dates}, // Safe Position Return Time
    {0x30080250, XD, Dates}, // Treatment Date
    {0x30080251, XD, Dates}, // Treatment Time
    {0x300A0002, D, 0}, // RT Plan Label
    {0x300A0003, X, 0}, // RT Plan Name
    {0x300A0004, X, 0}, // RT Plan Description
    {0x300A0006, XD, Dates}, // RT Plan Date
    {0x300A0007, XD, Dates}, // RT Plan Time
    {0x300A000B, X, 0}, // Treatment Sites
    {0x300A000E, X, 0}, // Prescription Description
    {0x300A0013, U, 0}, // Dose Reference UID
    {0x300A0016, X, 0}, // Dose Reference Description
    {0x300A0054, U, 0}, // Table Top Position Alignment UID (since 2024b)
    {0x300A0072, X, 0}, // Fraction Group Description
    {0x300A0083, U, 0}, // Referenced Dose Reference UID
    {0x300A00B2, XZ, 0}, // Treatment Machine Name
    {0x300A00C3, X, 0}, // Beam Description
    {0x300A00DD, X, 0}, // Bolus Description
    {0x300A0196, X, 0}, // Fixation Device Description
    {0x300A01A6, X, 0}, // Shielding Device Description
    {0x300A01B2, X, 0}, // Setup Technique Description
    {0x300A0216, X, 0}, // Source Manufacturer
    {0x300A022C, D, Dates}, // Source Strength Reference Date
    {0x300A022E, D, Dates}, // Source Strength Reference Time
    {0x300A02EB, X, 0}, // Compensator Description
    {0x300A0608, D, 0}, // Treatment Position Group Label
    {0x300A0609, U, 0}, // Treatment Position Group UID
    {0x300A0611, Z, 0}, // RT Accessory Holder Slot ID
    {0x300A0615, Z, 0}, // RT Accessory Device Slot ID
    {0x300A0619, D, 0}, // Radiation Dose Identification Label
    {0x300A0623, D, 0}, // Radiation Dose In-Vivo Measurement Label
    {0x300A062A, D, 0}, // RT Tolerance Set Label
    {0x300A0650, U, 0}, // Patient Setup UID
    {0x300A0676, X, 0}, // Equipment Frame of Reference Description
    {0x300A067C, D, 0}, // Radiation Generation Mode Label
    {0x300A067D, Z, 0}, // Radiation Generation Mode Description
    {0x300A0700, U, 0}, // Treatment Session UID
    {0x300A0734, D, 0}, // Treatment Tolerance Violation Description
    {0x300A0736, D, Dates}, // Treatment Tolerance Violation DateTime
    {0x300A073A, D, Dates}, // Recorded RT Control Point DateTime
    {0x300A0741, D, Dates}, // Interlock DateTime
    {0x300A0742, D, 0}, // Interlock Description
    {0x300A0760, D, Dates}, // Override DateTime
    {0x300A0783, D, 0}, // Interlock Origin Description
    {0x300A0785, U, 0}, // Referenced Treatment Position Group UID
    {0x300A078E, X, 0}, // Patient Treatment Preparation Procedure Parameter Description
    {0x300A0792, X, 0}, // Patient Treatment Preparation Method Description
    {0x300A0794, X, 0}, // Patient Setup Photo Description
    {0x300A079A, X, 0}, // Displacement Reference Label
    {0x300C0113, X, 0}, // Reason for Omission Description
    {0x300C0127, D, Dates}, // Beam Hold Transition DateTime
    {0x300E0004, Z, Dates}, // Review Date
    {0x300E0005, Z, Dates}, // Review Time
    {0x300E0008, XZ, 0}, // Reviewer Name
    {0x30100006, U, 0}, // Conceptual Volume UID
    {0x3010000B, U, 0}, // Referenced Conceptual Volume UID
    {0x3010000F, Z, 0}, // Conceptual Volume Combination Description
    {0x30100013, U, 0}, // Constituent Conceptual Volume UID
    {0x30100015, U, 0}, // Source Conceptual Volume UID
    {0x30100017, Z, 0}, // Conceptual Volume Description
    {0x3010001B, Z, 0}, // Device Alternate Identifier
    {0x3010002D, D, 0}, // Device Label
    {0x30100031, U, 0}, // Referenced Fiducials UID
    {0x30100033, D, 0}, // User Content Label
    {0x30100034, D, 0}, // User Content Long Label
    {0x30100035, D, 0}, // Entity Label
    {0x30100036, X, 0}, // Entity Name
    {0x30100037, X, 0}, // Entity Description
    {0x30100038, D, 0}, // Entity Long Label
    {0x3010003B, U, 0}, // RT Treatment Phase UID
    {0x30100043, Z, 0}, // Manufacturer's Device Identifier
    {0x3010004C, XD, Dates}, // Intended Phase Start Date
    {0x3010004D, XD, Dates}, // Intended Phase End Date
    {0x30100054, D, 0}, // RT Prescription Label
    {0x30100056, XD, 0}, // RT Treatment Approach Label
    {0x3010005A, Z, 0}, // RT Physician Intent Narrative
    {0x3010005C, Z, 0}, // Reason for Superseding
    {0x30100061, X, 0}, // Prior Treatment Dose Description
    {0x3010006E, U, 0}, // Dosimetric Objective UID
    {0x3010006F, U, 0}, // Referenced Dosimetric Objective UID
    {0x30100077, XD, 0}, // Treatment Site
    {0x3010007A, Z, 0}, // Treatment Technique Notes
    {0x3010007B, Z, 0}, // Prescription Notes
    {0x3010007F, Z, 0}, // Fractionation Notes
    {0x30100081, Z, 0}, // Prescription Notes Sequence
    {0x30100085, X, Dates}, // Intended Fraction Start Time
    {0x40000010, X, 0}, // Arbitrary
    {0x40004000, X, 0}, // Text Comments
    {0x40080040, X, 0}, // Results ID
    {0x40080042, X, 0}, // Results ID Issuer
    {0x40080100, X, Dates}, // Interpretation Recorded Date
    {0x40080101, X, Dates}, // Interpretation Recorded Time
    {0x40080102, X, 0}, // Interpretation Recorder
    {0x40080108, X, Dates}, // Interpretation Transcription Date
    {0x40080109, X, Dates}, // Interpretation Transcription Time
    {0x4008010A, X, 0}, // Interpretation Transcriber
    {0x4008010B, X, 0}, // Interpretation Text
    {0x4008010C, X, 0}, // Interpretation Author
    {0x40080111, X, 0}, // Interpretation Approver Sequence
    {0x40080112, X, Dates}, // Interpretation Approval Date
    {0x40080113, X, Dates}, // Interpretation Approval Time
    {0x40080114, X, 0}, // Physician Approving Interpretation
    {0x40080115, X, 0}, // Interpretation Diagnosis Description
    {0x40080118, X, 0}, // Results Distribution List Sequence
    {0x40080119, X, 0}, // Distribution Name
    {0x4008011A, X, 0}, // Distribution Address
    {0x40080200, X, 0}, // Interpretation ID
    {0x40080202, X, 0}, // Interpretation ID Issuer
    {0x40080300, X, 0}, // Impressions
    {0x40084000, X, 0}, // Results Comments
    {0xFFFAFFFA, X, 0}, // Digital Signatures Sequence
    {0xFFFCFFFC, X, 0}, // Data Set Trailing Padding
};

} // namespace

const Rule *ruleFor(quint16 group, quint16 element)
{
    const quint32 tag = quint32(group) << 16 | element;
    const Rule *end = std::end(kRules);
    const Rule *r = std::lower_bound(std::begin(kRules), end, tag, [](const Rule &rule, quint32 t) { return rule.tag < t; });
    return r != end && r->tag == tag ? r : nullptr;
}

int ruleCount()
{
    return int(std::size(kRules));
}

} // namespace spectrum::basicprofile

#include "spectrum/imaging/deidentify.h"

#include "dcmtksupport.h"
#include "spectrum/core/uid.h"

#include <QCryptographicHash>
#include <QRandomGenerator>

#include <set>

namespace spectrum {

namespace {

/// What PS3.15 Table E.1-1's Basic Profile does to an attribute. Dates and times are kept with the Retain
/// Longitudinal Temporal Information with Full Dates option.
enum class Action : char { Remove = 'X', Empty = 'Z', Dummy = 'D' };

struct Rule
{
    Uint16 group, element;
    Action action;
    bool temporal;
};

constexpr Action X = Action::Remove, Z = Action::Empty, D = Action::Dummy;

const Rule kRules[] = {
    // Dates and times.
    {0x0008, 0x0012, X, true}, {0x0008, 0x0013, X, true}, {0x0008, 0x0020, Z, true}, {0x0008, 0x0021, X, true}, {0x0008, 0x0022, X, true},
    {0x0008, 0x0023, Z, true}, {0x0008, 0x0024, X, true}, {0x0008, 0x0025, X, true}, {0x0008, 0x002A, X, true}, {0x0008, 0x0030, Z, true},
    {0x0008, 0x0031, X, true}, {0x0008, 0x0032, X, true}, {0x0008, 0x0033, Z, true}, {0x0008, 0x0034, X, true}, {0x0008, 0x0035, X, true},
    {0x0008, 0x0201, X, true}, {0x0038, 0x0020, X, true}, {0x0038, 0x0021, X, true}, {0x0040, 0x0002, X, true}, {0x0040, 0x0003, X, true},
    {0x0040, 0x0244, X, true}, {0x0040, 0x0245, X, true}, {0x0040, 0x0250, X, true}, {0x0040, 0x0251, X, true}, {0x0040, 0xA030, X, true},
    {0x0040, 0xA032, X, true}, {0x0040, 0xA120, X, true}, {0x0040, 0xA121, X, true}, {0x0040, 0xA122, X, true}, {0x0070, 0x0082, X, true},
    {0x0070, 0x0083, X, true},
    // The study, the people and places around it.
    {0x0008, 0x0050, Z, false}, {0x0008, 0x0080, X, false}, {0x0008, 0x0081, X, false}, {0x0008, 0x0082, X, false}, {0x0008, 0x0090, Z, false},
    {0x0008, 0x0092, X, false}, {0x0008, 0x0094, X, false}, {0x0008, 0x0096, X, false}, {0x0008, 0x009C, X, false}, {0x0008, 0x009D, X, false},
    {0x0008, 0x1010, X, false}, {0x0008, 0x1030, X, false}, {0x0008, 0x103E, X, false}, {0x0008, 0x1040, X, false}, {0x0008, 0x1048, X, false},
    {0x0008, 0x1049, X, false}, {0x0008, 0x1050, X, false}, {0x0008, 0x1052, X, false}, {0x0008, 0x1060, X, false}, {0x0008, 0x1062, X, false},
    {0x0008, 0x1070, X, false}, {0x0008, 0x1072, X, false}, {0x0008, 0x1080, X, false}, {0x0008, 0x1084, X, false}, {0x0008, 0x1110, X, false},
    {0x0008, 0x1111, X, false}, {0x0008, 0x1120, X, false}, {0x0008, 0x2111, X, false}, {0x0008, 0x4000, X, false},
    // The patient.
    {0x0010, 0x0021, X, false}, {0x0010, 0x0030, Z, false}, {0x0010, 0x0032, X, false}, {0x0010, 0x0040, Z, false}, {0x0010, 0x0050, X, false},
    {0x0010, 0x0101, X, false}, {0x0010, 0x0102, X, false}, {0x0010, 0x1000, X, false}, {0x0010, 0x1001, X, false}, {0x0010, 0x1002, X, false},
    {0x0010, 0x1005, X, false}, {0x0010, 0x1010, X, false}, {0x0010, 0x1020, X, false}, {0x0010, 0x1030, X, false}, {0x0010, 0x1040, X, false},
    {0x0010, 0x1050, X, false}, {0x0010, 0x1060, X, false}, {0x0010, 0x1080, X, false}, {0x0010, 0x1081, X, false}, {0x0010, 0x1090, X, false},
    {0x0010, 0x2000, X, false}, {0x0010, 0x2110, X, false}, {0x0010, 0x2150, X, false}, {0x0010, 0x2152, X, false}, {0x0010, 0x2154, X, false},
    {0x0010, 0x2160, X, false}, {0x0010, 0x2180, X, false}, {0x0010, 0x21A0, X, false}, {0x0010, 0x21B0, X, false}, {0x0010, 0x21C0, X, false},
    {0x0010, 0x21D0, X, false}, {0x0010, 0x21F0, X, false}, {0x0010, 0x4000, X, false},
    // Devices, protocols, comments.
    {0x0018, 0x1000, X, false}, {0x0018, 0x1004, X, false}, {0x0018, 0x1005, X, false}, {0x0018, 0x1007, X, false}, {0x0018, 0x1030, X, false},
    {0x0018, 0x1400, X, false}, {0x0018, 0x4000, X, false}, {0x0018, 0x700A, X, false}, {0x0018, 0x9424, X, false}, {0x0020, 0x0010, Z, false},
    {0x0020, 0x4000, X, false},
    // Requests, visits, procedure steps.
    {0x0032, 0x0012, X, false}, {0x0032, 0x1020, X, false}, {0x0032, 0x1021, X, false}, {0x0032, 0x1030, X, false}, {0x0032, 0x1032, X, false},
    {0x0032, 0x1033, X, false}, {0x0032, 0x1060, X, false}, {0x0032, 0x1070, X, false}, {0x0032, 0x4000, X, false}, {0x0038, 0x0010, X, false},
    {0x0038, 0x0011, X, false}, {0x0038, 0x001E, X, false}, {0x0038, 0x0040, X, false}, {0x0038, 0x0050, X, false}, {0x0038, 0x0060, X, false},
    {0x0038, 0x0061, X, false}, {0x0038, 0x0062, X, false}, {0x0038, 0x0300, X, false}, {0x0038, 0x0400, X, false}, {0x0038, 0x0500, X, false},
    {0x0038, 0x4000, X, false}, {0x0040, 0x0001, X, false}, {0x0040, 0x0006, X, false}, {0x0040, 0x0007, X, false}, {0x0040, 0x000B, X, false},
    {0x0040, 0x0010, X, false}, {0x0040, 0x0011, X, false}, {0x0040, 0x0012, X, false}, {0x0040, 0x0241, X, false}, {0x0040, 0x0242, X, false},
    {0x0040, 0x0243, X, false}, {0x0040, 0x0253, X, false}, {0x0040, 0x0254, X, false}, {0x0040, 0x0275, X, false}, {0x0040, 0x0280, X, false},
    {0x0040, 0x1001, X, false}, {0x0040, 0x1004, X, false}, {0x0040, 0x1005, X, false}, {0x0040, 0x1010, X, false}, {0x0040, 0x1101, X, false},
    {0x0040, 0x1102, X, false}, {0x0040, 0x1103, X, false}, {0x0040, 0x1400, X, false}, {0x0040, 0x2001, X, false}, {0x0040, 0x2008, X, false},
    {0x0040, 0x2009, X, false}, {0x0040, 0x2010, X, false}, {0x0040, 0x2016, Z, false}, {0x0040, 0x2017, Z, false}, {0x0040, 0x2400, X, false},
    {0x0040, 0x3001, X, false},
    // Reports' observers (Clean Structured Content: the content stays, the people in it do not).
    {0x0040, 0xA027, X, false}, {0x0040, 0xA075, D, false}, {0x0040, 0xA078, X, false}, {0x0040, 0xA07A, X, false}, {0x0040, 0xA07C, X, false},
    {0x0040, 0xA088, Z, false}, {0x0040, 0xA123, D, false}, {0x0070, 0x0084, Z, false}, {0x0070, 0x0086, X, false},
    // What was changed before, and by whom.
    {0x0400, 0x0550, X, false}, {0x0400, 0x0561, X, false},
};

/// Attributes holding instance UIDs (their own or those they refer to): replaced through the export's UidMap.
const std::set<std::pair<Uint16, Uint16>> kUidTags = {
    {0x0008, 0x0014}, {0x0008, 0x0018}, {0x0008, 0x0058}, {0x0008, 0x1155}, {0x0008, 0x1195}, {0x0008, 0x3010}, {0x0008, 0x9123},
    {0x0018, 0x1002}, {0x0020, 0x000D}, {0x0020, 0x000E}, {0x0020, 0x0052}, {0x0020, 0x0200}, {0x0020, 0x9161}, {0x0020, 0x9164},
    {0x0028, 0x1199}, {0x0028, 0x1214}, {0x0040, 0x4023}, {0x0040, 0xA124}, {0x0040, 0xA171}, {0x0040, 0xA402}, {0x0062, 0x0021},
    {0x0064, 0x0003}, {0x0070, 0x031A}, {0x0088, 0x0140}, {0x3006, 0x0024}, {0x3006, 0x00C2}, {0x0004, 0x1511},
};

/// Free text the profile's Clean Structured Content option keeps: listed for the reader to check.
const std::set<std::pair<Uint16, Uint16>> kKeptText = {{0x0040, 0xA160}, {0x0070, 0x0006}};

const Rule *ruleFor(Uint16 group, Uint16 element)
{
    for (const Rule &r : kRules)
        if (r.group == group && r.element == element)
            return &r;
    return nullptr;
}

struct Walk
{
    const DeidentifyOptions &options;
    UidMap &uids;
    QStringList textsKept;
};

void clean(DcmItem *item, Walk &w)
{
    for (long i = long(item->card()) - 1; i >= 0; --i) {
        DcmElement *e = item->getElement(static_cast<unsigned long>(i));
        const DcmTagKey key = e->getTag().getXTag();
        const Uint16 g = key.getGroup(), el = key.getElement();
        // Private attributes, curves, overlays and interpretations: gone.
        if ((g & 1) || (g >= 0x5000 && g <= 0x50FF) || (g >= 0x6000 && g <= 0x60FF) || g == 0x4008) {
            delete item->remove(e);
            continue;
        }
        if (kUidTags.count({g, el})) {
            OFString value;
            if (e->getOFStringArray(value).good() && !value.empty()) {
                QStringList mapped;
                for (const QString &uid : QString::fromLatin1(value.c_str()).split(QLatin1Char('\\')))
                    mapped << w.uids.map(uid.trimmed());
                e->putString(mapped.join(QLatin1Char('\\')).toLatin1().constData());
            }
            continue;
        }
        if (kKeptText.count({g, el})) {
            OFString value;
            if (e->getOFStringArray(value).good() && !value.empty())
                w.textsKept << QString::fromUtf8(value.c_str());
        }
        if (const Rule *r = ruleFor(g, el); r && !(r->temporal && w.options.retainDates)) {
            if (r->action == Action::Remove) {
                delete item->remove(e);
                continue;
            }
            if (r->action == Action::Empty) {
                if (e->ident() == EVR_SQ)
                    static_cast<DcmSequenceOfItems *>(e)->clear();
                else
                    e->putString("");
                continue;
            }
            // Dummy: a name that names no one.
            if (e->ident() != EVR_SQ)
                e->putString("ANONYMOUS");
            continue;
        }
        if (e->ident() == EVR_SQ) {
            auto *seq = static_cast<DcmSequenceOfItems *>(e);
            for (unsigned long k = 0; k < seq->card(); ++k)
                clean(seq->getItem(k), w);
            continue;
        }
        // A person's name the table does not list (a vendor's, a newer attribute): no one is named all the same.
        if (e->ident() == EVR_PN && !(g == 0x0010 && el == 0x0010)) {
            OFString value;
            if (e->getOFStringArray(value).good() && !value.empty())
                e->putString("ANONYMOUS");
        }
    }
}

} // namespace

UidMap::UidMap()
{
    // A secret of this export alone: its new UIDs and pseudonyms lead back to nothing outside it.
    QByteArray secret(32, Qt::Uninitialized);
    QRandomGenerator::system()->generate(reinterpret_cast<quint32 *>(secret.data()), reinterpret_cast<quint32 *>(secret.data() + secret.size()));
    m_secret = secret;
}

QString UidMap::map(const QString &uid)
{
    if (uid.isEmpty())
        return uid;
    auto it = m_uids.find(uid);
    if (it == m_uids.end())
        it = m_uids.insert(uid, makeUidFromName(m_secret + uid.toLatin1()));
    return it.value();
}

QString UidMap::pseudonym(const QString &patientId)
{
    const QByteArray digest = QCryptographicHash::hash(m_secret + "patient:" + patientId.toUtf8(), QCryptographicHash::Sha256);
    return QStringLiteral("ANON-") + QString::fromLatin1(digest.toHex().left(10)).toUpper();
}

QString deidentificationMethod(const DeidentifyOptions &options)
{
    QString m = QStringLiteral("PS3.15 E Basic Profile; Clean Structured Content");
    if (options.retainDates)
        m += QStringLiteral("; Retain Longitudinal Full Dates");
    return m;
}

Result<DeidentifiedInstance> deidentify(const ByteView &dicom, const DeidentifyOptions &options, UidMap &uids)
{
    dcmtk::registerCodecs();
    DcmFileFormat file;
    if (Error e = dcmtk::parse(dicom, file, dcmtk::ParseExtent::Everything); e.isError())
        return e;
    DcmDataset *ds = file.getDataset();
    DeidentifiedInstance out;
    out.originalSopInstanceUid = dcmtk::getString(ds, DCM_SOPInstanceUID);
    if (out.originalSopInstanceUid.isEmpty())
        return Error(ErrorCode::InvalidDicom, QStringLiteral("no SOP Instance UID: not an instance to export"));
    const QString originalPatientId = dcmtk::getString(ds, DCM_PatientID);
    // Pixels that may show who the patient is: said, never passed as clean.
    const QString burnedIn = dcmtk::getString(ds, DCM_BurnedInAnnotation).trimmed().toUpper();
    const QString modality = dcmtk::getString(ds, DCM_Modality);
    if (burnedIn == QLatin1String("YES"))
        out.burnedInWarning = QStringLiteral("Burned In Annotation is YES: the pixels show text, which may name the patient");
    else if (burnedIn.isEmpty() && ds->tagExists(DCM_PixelData)
             && QStringList{QStringLiteral("US"), QStringLiteral("SC"), QStringLiteral("ES"), QStringLiteral("XC"), QStringLiteral("OT")}.contains(modality))
        out.burnedInWarning = QStringLiteral("a %1 image that does not say whether its pixels show text (they often do)").arg(modality);

    Walk walk{options, uids, {}};
    clean(ds, walk);
    out.textsKept = walk.textsKept;
    // The patient as the export names them.
    const QString name = options.patientName.isEmpty() ? QStringLiteral("ANONYMOUS") : options.patientName;
    const QString id = options.patientId.isEmpty() ? uids.pseudonym(originalPatientId) : options.patientId;
    const bool utf8 = dcmtk::getString(ds, DCM_SpecificCharacterSet).contains(QLatin1String("192"));
    ds->putAndInsertString(DCM_PatientName, utf8 ? name.toUtf8().constData() : name.toLatin1().constData());
    ds->putAndInsertString(DCM_PatientID, id.toLatin1().constData());
    // What was done, in the dataset itself (PS3.15 E.1.1).
    ds->putAndInsertString(DCM_PatientIdentityRemoved, "YES");
    ds->putAndInsertString(DCM_DeidentificationMethod, deidentificationMethod(options).toLatin1().constData());
    ds->findAndDeleteElement(DCM_DeidentificationMethodCodeSequence);
    auto code = [ds](const char *value, const char *meaning) {
        DcmItem *c = nullptr;
        ds->findOrCreateSequenceItem(DCM_DeidentificationMethodCodeSequence, c, -2);
        c->putAndInsertString(DCM_CodeValue, value);
        c->putAndInsertString(DCM_CodingSchemeDesignator, "DCM");
        c->putAndInsertString(DCM_CodeMeaning, meaning);
    };
    code("113100", "Basic Application Confidentiality Profile");
    code("113104", "Clean Structured Content Option");
    if (options.retainDates)
        code("113106", "Retain Longitudinal Temporal Information Full Dates Option");
    ds->putAndInsertString(DCM_LongitudinalTemporalInformationModified, options.retainDates ? "UNMODIFIED" : "REMOVED");
    out.sopInstanceUid = dcmtk::getString(ds, DCM_SOPInstanceUID);
    // The file meta information is made anew from the dataset (its Media Storage SOP Instance UID with it).
    file.getMetaInfo()->clear();
    Result<QByteArray> bytes = dcmtk::serialize(file, ds->getOriginalXfer() == EXS_Unknown ? EXS_LittleEndianExplicit : ds->getOriginalXfer());
    if (!bytes.isOk())
        return bytes.error();
    out.bytes = bytes.value();
    return out;
}

} // namespace spectrum

// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/documents/deidentify.h"

#include "documents/basicprofile.h"
#include "dcmtksupport.h"
#include "spectrum/core/uid.h"

#include <QCryptographicHash>
#include <QRegularExpression>
#include <QRandomGenerator>

#include <algorithm>
#include <vector>

namespace spectrum {

namespace {

/// Free text the profile's Clean Structured Content option keeps (a report's TEXT items): listed for the reader.
bool isKeptText(Uint16 group, Uint16 element)
{
    return group == 0x0040 && element == 0xA160;
}

/// Repeating groups and private attributes, removed whole: private attributes (odd groups), curves (50xx) and overlays
/// (60xx: the table lists their data and comments; the rest describes what is removed).
bool removedWhole(Uint16 group)
{
    return (group & 1) || (group >= 0x5000 && group <= 0x50FF) || (group >= 0x6000 && group <= 0x60FF);
}

struct Walk
{
    const DeidentifyOptions &options;
    UidMap &uids;
    QStringList textsKept;
    QList<QRegularExpression> identifiers;  ///< the patient's names, IDs and birth date as free text may write them
    bool utf8 = false;                      ///< the dataset's text is UTF-8
    bool rewritable = false;                ///< UTF-8 or Latin-1 (other character sets: listed, not rewritten)
    int scrubbed = 0;                       ///< identifiers replaced in free text kept
};

/// What free text may name the patient by: the name's parts, the IDs, the accession number, the birth date in the
/// ways people write dates — each a whole word, any case.
QList<QRegularExpression> identifiersOf(DcmItem *ds)
{
    QStringList words;
    for (const QString &part : dcmtk::getString(ds, DCM_PatientName).split(QRegularExpression(QStringLiteral("[\\^=\\s,]+")), Qt::SkipEmptyParts))
        if (part.size() >= 3)
            words << part;
    for (const DcmTagKey &tag : {DCM_PatientID, DCM_RETIRED_OtherPatientIDs, DCM_AccessionNumber, DCM_PatientBirthName, DCM_PatientMotherBirthName})
        for (const QString &value : dcmtk::getString(ds, tag).split(QLatin1Char('\\'), Qt::SkipEmptyParts))
            if (value.trimmed().size() >= 3)
                words << value.trimmed();
    const QString birth = dcmtk::getString(ds, DCM_PatientBirthDate);
    if (birth.size() == 8) {
        const QString y = birth.left(4), m = birth.mid(4, 2), d = birth.right(2);
        words << birth << y + QLatin1Char('-') + m + QLatin1Char('-') + d << d + QLatin1Char('.') + m + QLatin1Char('.') + y
              << m + QLatin1Char('/') + d + QLatin1Char('/') + y << d + QLatin1Char('/') + m + QLatin1Char('/') + y;
    }
    QList<QRegularExpression> out;
    words.removeDuplicates();
    for (const QString &w : std::as_const(words))
        out << QRegularExpression(QStringLiteral("(?<![\\w])") + QRegularExpression::escape(w) + QStringLiteral("(?![\\w])"),
                                  QRegularExpression::CaseInsensitiveOption | QRegularExpression::UseUnicodePropertiesOption);
    return out;
}

void clean(DcmItem *item, Walk &w, bool dummies);

/// Free text an option keeps: what names the patient in it replaced (identifiersOf), the rest listed for the reader.
void listKeptText(DcmElement *e, Walk &w)
{
    OFString value;
    if (e->getOFStringArray(value).bad() || value.empty())
        return;
    QString text = w.utf8 ? QString::fromUtf8(value.c_str()) : QString::fromLatin1(value.c_str());
    bool changed = false;
    for (const QRegularExpression &id : w.rewritable ? w.identifiers : QList<QRegularExpression>()) {
        const QString before = text;
        text.replace(id, QStringLiteral("ANONYMOUS"));
        if (text != before) {
            changed = true;
            ++w.scrubbed;
        }
    }
    if (changed)
        e->putString(w.utf8 ? text.toUtf8().constData() : text.toLatin1().constData());
    w.textsKept << text;
}

void mapUids(DcmElement *e, Walk &w)
{
    OFString value;
    if (e->getOFStringArray(value).good() && !value.empty()) {
        QStringList mapped;
        for (const QString &uid : QString::fromLatin1(value.c_str()).split(QLatin1Char('\\')))
            mapped << w.uids.map(uid.trimmed());
        e->putString(mapped.join(QLatin1Char('\\')).toLatin1().constData());
    }
}

void cleanItems(DcmElement *e, Walk &w, bool dummies)
{
    auto *seq = static_cast<DcmSequenceOfItems *>(e);
    for (unsigned long k = 0; k < seq->card(); ++k)
        clean(seq->getItem(k), w, dummies);
}

/// D: a value of the attribute's VR that names, dates and places nothing. A sequence keeps its items with every
/// value in them a dummy (or as the table says, for the attributes it lists).
void putDummy(DcmElement *e, Walk &w)
{
    switch (e->ident()) {
    case EVR_SQ: cleanItems(e, w, true); break;
    case EVR_UI: mapUids(e, w); break;
    case EVR_DA: e->putString("19000101"); break;
    case EVR_TM: e->putString("000000"); break;
    case EVR_DT: e->putString("19000101000000"); break;
    case EVR_AS: e->putString("000D"); break;
    case EVR_DS:
    case EVR_IS:
    case EVR_US:
    case EVR_SS:
    case EVR_UL:
    case EVR_SL:
    case EVR_FL:
    case EVR_FD:
    case EVR_OF:
    case EVR_OD:
    case EVR_OL:
    case EVR_OV:
    case EVR_SV:
    case EVR_UV: e->putString("0"); break;
    case EVR_OB:
    case EVR_OW:
    case EVR_UN: {
        // Zeros as long as the value was (a length said elsewhere, Encapsulated Document Length, stays true), up to
        // 64 MiB: a longer value becomes two zero bytes.
        const Uint32 original = (e->getLength() + 1) & ~Uint32(1);
        const Uint32 length = original > (64U << 20) ? 2 : std::max<Uint32>(2, original);
        std::vector<Uint8> zeros(length, 0);
        e->putUint8Array(zeros.data(), length);
        break;
    }
    case EVR_AT: break;  // a tag, naming no one
    case EVR_UR: e->putString("urn:anonymous"); break;
    default: e->putString("ANONYMOUS"); break;  // AE, CS, LO, LT, PN, SH, ST, UC, UT
    }
}

/// The table's rule for one listed attribute. False when the element was removed.
bool apply(DcmItem *item, DcmElement *e, const basicprofile::Rule &rule, Walk &w)
{
    using basicprofile::Action;
    if ((rule.options & basicprofile::Dates) && w.options.retainDates)
        return true;  // K with the option
    // Clean Structured Content and Clean Graphics: sequences kept and cleaned as the table says, attribute by
    // attribute; the words of the graphics kept and listed for the reader.
    if (rule.options & (basicprofile::Content | basicprofile::Graphics)) {
        if (e->ident() == EVR_SQ)
            cleanItems(e, w, false);
        else
            listKeptText(e, w);
        return true;
    }
    switch (rule.action) {
    case Action::X:
        delete item->remove(e);
        return false;
    case Action::Z:
    case Action::XZ:  // empty is right whether the IOD makes it Type 2 or 3
        e->clear();
        return true;
    case Action::U:
        mapUids(e, w);
        return true;
    case Action::XZU:  // the references kept, their UIDs replaced: they still resolve inside the export
        if (e->ident() == EVR_SQ)
            cleanItems(e, w, false);
        else if (e->ident() == EVR_UI)
            mapUids(e, w);
        else
            e->clear();
        return true;
    case Action::D:
    case Action::XD:  // a dummy is right whether the IOD makes it Type 1 or not
    case Action::ZD:
    case Action::XZD:
        if (e->getLength() == 0 && e->ident() != EVR_SQ)
            return true;  // empty already: nothing to hide, and a dummy would invent a value
        putDummy(e, w);
        return true;
    }
    return true;
}

/// `dummies`: inside a sequence the profile replaces (D): every value the table does not list becomes a dummy too.
void clean(DcmItem *item, Walk &w, bool dummies)
{
    for (long i = long(item->card()) - 1; i >= 0; --i) {
        DcmElement *e = item->getElement(static_cast<unsigned long>(i));
        const DcmTagKey key = e->getTag().getXTag();
        const Uint16 g = key.getGroup(), el = key.getElement();
        if (removedWhole(g)) {
            delete item->remove(e);
            continue;
        }
        if (const basicprofile::Rule *r = basicprofile::ruleFor(g, el)) {
            apply(item, e, *r, w);
            continue;
        }
        if (g == 0x4008) {  // the retired interpretations: what the table does not list of them goes too
            delete item->remove(e);
            continue;
        }
        if (e->ident() == EVR_SQ) {
            cleanItems(e, w, dummies);
            continue;
        }
        if (dummies) {
            if (e->ident() != EVR_UI && e->getLength() > 0)  // the UIDs here are codes' and classes', not instances'
                putDummy(e, w);
            continue;
        }
        if (isKeptText(g, el))
            listKeptText(e, w);
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
    QString m = QStringLiteral("PS3.15 E Basic Profile; Clean Structured Content; Clean Graphics");
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

    const QString charset = dcmtk::getString(ds, DCM_SpecificCharacterSet).trimmed();
    const bool utf8Text = charset.contains(QLatin1String("192"));
    Walk walk{options, uids, {}, identifiersOf(ds), utf8Text, utf8Text || charset.isEmpty() || charset == QLatin1String("ISO_IR 100"), 0};
    clean(ds, walk, false);
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
    code("113103", "Clean Graphics Option");
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

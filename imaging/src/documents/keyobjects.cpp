// SPDX-License-Identifier: Apache-2.0
#include "spectrum/imaging/documents/keyobjects.h"

#include "dcmtksupport.h"
#include "documents/srcodes.h"
#include "documents/srdocument.h"
#include "spectrum/core/uid.h"

#include <dcmtk/dcmsr/dsrdoc.h>

#include <QHash>

namespace spectrum {

namespace {

using T = DSRTypes;
using srdoc::ascii;

QString text(const OFString &s)
{
    return QString::fromUtf8(s.c_str());
}

} // namespace

Result<QByteArray> writeKeyObjectSelection(const KeyObjectRequest &request)
{
    dcmtk::registerCodecs();
    const DicomIdentity &study = request.study;
    if (!isValidUid(study.studyInstanceUid))
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the key images name no study"));
    if (request.images.isEmpty() && request.documents.isEmpty())
        return Error(ErrorCode::InvalidArgument, QStringLiteral("no key images"));
    if (request.description.size() > 1024)
        return Error(ErrorCode::InvalidArgument, QStringLiteral("the note is longer than 1024 characters"));
    // One reference per image, with the frames named of it.
    QList<ImageRef> images;
    QHash<QString, QList<int>> frames;
    for (const ImageRef &r : request.images) {
        if (r.studyInstanceUid != study.studyInstanceUid)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("a key image of another study (%1)").arg(r.studyInstanceUid));
        if (r.sopClassUid.isEmpty() || r.sopInstanceUid.isEmpty() || r.seriesInstanceUid.isEmpty())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("a key image without its SOP class, instance or series"));
        if (!frames.contains(r.sopInstanceUid)) {
            ImageRef whole = r;
            whole.frame = 0;
            images << whole;
        }
        QList<int> &f = frames[r.sopInstanceUid];
        if (r.frame > 0 && !f.contains(r.frame))
            f << r.frame;
    }
    DSRDocument doc(T::DT_KeyObjectSelectionDocument);
    const Result<srdoc::Encoder> started = srdoc::startDocument(
        doc, study, {request.description, request.observerName},
        request.seriesDescription.isEmpty() ? QStringLiteral("Spectrum key images") : request.seriesDescription,
        request.seriesNumber > 0 ? request.seriesNumber : 9002, 1);
    if (!started.isOk())
        return started.error();
    const srdoc::Encoder encode = started.value();

    DSRDocumentTree &tree = doc.getTree();
    auto fail = [](const char *what) { return Error(ErrorCode::InvalidArgument, QStringLiteral("cannot write the key images: %1").arg(QLatin1String(what))); };
    const DSRCodedEntryValue title(request.title == KeyObjectTitle::OfInterest ? CODE_DCM_OfInterest : CODE_DCM_RejectedForQualityReasons);
    if (tree.addContentItem(T::RT_isRoot, T::VT_Container) == 0 || tree.getCurrentContentItem().setConceptName(title).bad()
        || tree.getCurrentContentItem().setTemplateIdentification("2010", "DCMR").bad())
        return fail("the document title");
    bool first = true;
    auto add = [&](T::E_RelationshipType rel, T::E_ValueType type, const DSRCodedEntryValue &concept) {
        const bool ok = tree.addContentItem(rel, type, first ? T::AM_belowCurrent : T::AM_afterCurrent) > 0
                     && (concept.isEmpty() || tree.getCurrentContentItem().setConceptName(concept).good());
        first = false;
        return ok;
    };
    if (!request.observerName.isEmpty()) {
        if (!add(T::RT_hasObsContext, T::VT_Code, DSRCodedEntryValue(CODE_DCM_ObserverType))
            || tree.getCurrentContentItem().setCodeValue(DSRCodedEntryValue(CODE_DCM_Person)).bad())
            return fail("the observer type");
        if (!add(T::RT_hasObsContext, T::VT_PName, DSRCodedEntryValue(CODE_DCM_PersonObserverName))
            || tree.getCurrentContentItem().setStringValue(encode(request.observerName)).bad())
            return fail("the observer's name");
    }
    if (!request.description.isEmpty()) {
        if (!add(T::RT_contains, T::VT_Text, DSRCodedEntryValue(CODE_DCM_KeyObjectDescription))
            || tree.getCurrentContentItem().setStringValue(encode(request.description)).bad())
            return fail("the note");
    }
    for (const ImageRef &r : images) {
        DSRImageReferenceValue value(ascii(r.sopClassUid), ascii(r.sopInstanceUid));
        for (int f : frames.value(r.sopInstanceUid))
            value.getFrameList().addItem(f);
        if (!add(T::RT_contains, T::VT_Image, DSRCodedEntryValue()) || tree.getCurrentContentItem().setImageReference(value).bad())
            return fail("an image reference");
        doc.getCurrentRequestedProcedureEvidence().addItem(ascii(r.studyInstanceUid), ascii(r.seriesInstanceUid), ascii(r.sopClassUid), ascii(r.sopInstanceUid));
    }
    for (const ImageRef &r : request.documents) {
        if (r.studyInstanceUid != study.studyInstanceUid)
            return Error(ErrorCode::InvalidArgument, QStringLiteral("a document of another study (%1)").arg(r.studyInstanceUid));
        if (r.sopClassUid.isEmpty() || r.sopInstanceUid.isEmpty() || r.seriesInstanceUid.isEmpty())
            return Error(ErrorCode::InvalidArgument, QStringLiteral("a document reference without its SOP class, instance or series"));
        if (!add(T::RT_contains, T::VT_Composite, DSRCodedEntryValue())
            || tree.getCurrentContentItem().setCompositeReference(DSRCompositeReferenceValue(ascii(r.sopClassUid), ascii(r.sopInstanceUid))).bad())
            return fail("a document reference");
        doc.getCurrentRequestedProcedureEvidence().addItem(ascii(r.studyInstanceUid), ascii(r.seriesInstanceUid), ascii(r.sopClassUid), ascii(r.sopInstanceUid));
    }
    DcmFileFormat file;
    if (OFCondition c = doc.write(*file.getDataset()); c.bad())
        return dcmtk::toError(c, QStringLiteral("cannot write the key images"));
    DcmDataset *ds = file.getDataset();
    ds->putAndInsertString(DCM_SOPInstanceUID, ascii(makeUid()).c_str());
    ds->putAndInsertString(DCM_SeriesInstanceUID, ascii(request.seriesInstanceUid.isEmpty() ? makeUid() : request.seriesInstanceUid).c_str());
    return dcmtk::serialize(file, EXS_LittleEndianExplicit);
}

Result<KeyObjectSelection> readKeyObjectSelection(const ByteView &bytes)
{
    dcmtk::registerCodecs();
    DcmFileFormat file;
    if (Error e = dcmtk::parse(bytes, file, dcmtk::ParseExtent::Everything); e.isError())
        return e;
    DcmDataset *ds = file.getDataset();
    if (dcmtk::getString(ds, DCM_SOPClassUID) != QLatin1String(UID_KeyObjectSelectionDocumentStorage))
        return Error(ErrorCode::InvalidDicom, QStringLiteral("not a Key Object Selection document"));
    DSRDocument doc;
    if (OFCondition c = doc.read(*ds, srdoc::kLenientRead); c.bad())
        return dcmtk::toError(c, QStringLiteral("not a readable Key Object Selection document"));
    KeyObjectSelection out;
    out.identity = dcmtk::readIdentity(ds);
    OFString date, time;
    doc.getContentDate(date);
    doc.getContentTime(time);
    out.contentDateTime = text(date) + text(time).left(6);
    // Where each image is: its series, from the evidence list.
    QHash<QString, std::pair<QString, QString>> place;  // SOP Instance UID → (study, series)
    DSRSOPInstanceReferenceList &evidence = doc.getCurrentRequestedProcedureEvidence();
    if (evidence.gotoFirstItem().good()) {
        do {
            OFString studyUid, seriesUid, instanceUid;
            evidence.getStudyInstanceUID(studyUid);
            evidence.getSeriesInstanceUID(seriesUid);
            evidence.getSOPInstanceUID(instanceUid);
            place.insert(text(instanceUid), {text(studyUid), text(seriesUid)});
        } while (evidence.gotoNextItem().good());
    }
    // A reference, placed in its study and series by the evidence list.
    auto referenceOf = [&](const DSRCompositeReferenceValue &value) {
        ImageRef r;
        r.sopClassUid = text(value.getSOPClassUID());
        r.sopInstanceUid = text(value.getSOPInstanceUID());
        const auto [studyUid, seriesUid] = place.value(r.sopInstanceUid);
        r.studyInstanceUid = studyUid.isEmpty() ? out.identity.studyInstanceUid : studyUid;
        r.seriesInstanceUid = seriesUid;
        return r;
    };
    DSRDocumentTree &tree = doc.getTree();
    if (tree.gotoRoot() == 0)
        return out;
    DSRContentItem &root = tree.getCurrentContentItem();
    out.title = text(root.getConceptName().getCodeMeaning());
    out.titleCode = text(root.getConceptName().getCodeValue());
    while (tree.iterate() > 0) {
        DSRContentItem &item = tree.getCurrentContentItem();
        switch (item.getValueType()) {
        case T::VT_Text:
            if (srcodes::same(item.getConceptName(), CODE_DCM_KeyObjectDescription))
                out.description = text(item.getStringValue());
            break;
        case T::VT_PName:
            if (srcodes::same(item.getConceptName(), CODE_DCM_PersonObserverName) && out.observerName.isEmpty())
                out.observerName = text(item.getStringValue());
            break;
        case T::VT_Image: {
            DSRImageReferenceValue value = item.getImageReference();
            ImageRef r = referenceOf(value);
            const DSRImageFrameList &frames = value.getFrameList();
            if (frames.isEmpty()) {
                out.images << r;
            } else {
                for (size_t i = 1; i <= frames.getNumberOfItems(); ++i) {
                    r.frame = frames.getItem(i);
                    out.images << r;
                }
            }
            break;
        }
        case T::VT_Composite: {
            const ImageRef r = referenceOf(item.getCompositeReference());
            // An image referenced as COMPOSITE (some writers do when they do not know it is one): an image still.
            if (dcmIsImageStorageSOPClassUID(r.sopClassUid.toLatin1().constData()))
                out.images << r;
            else
                out.documents << r;
            break;
        }
        case T::VT_Waveform:
            out.notShown << QObject::tr("a %1 reference: not an image").arg(QString::fromLatin1(T::valueTypeToDefinedTerm(item.getValueType())));
            break;
        default:
            break;
        }
    }
    if (!out.isRejectionNote())
        for (const ImageRef &d : out.documents)
            out.notShown << QObject::tr("a reference to a document (%1): not an image").arg(d.sopInstanceUid);
    return out;
}

bool KeyObjectSelection::isRejectionNote() const
{
    // CID 7011, Rejected for Quality Reasons; for Patient Safety Reasons; Incorrect Modality Worklist Entry; Data
    // Retention Policy Expired.
    return titleCode == QLatin1String("113001") || titleCode == QLatin1String("113037") || titleCode == QLatin1String("113038")
        || titleCode == QLatin1String("113039");
}

} // namespace spectrum

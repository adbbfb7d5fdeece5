// SPDX-License-Identifier: Apache-2.0
// Key images as a Key Object Selection document: what is marked is written as a KOS ("Of Interest", the note, one
// reference per image with its frames), read back the same, accepted by DCMTK's dsrdump and read by pydicom with the
// same references; what is not a KOS is refused plainly.

#include "testsupport.h"

#include "spectrum/imaging/documents/keyobjects.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace spectrum;

namespace {

const QString kStudy = QStringLiteral("2.25.1001");

ImageRef image(const QString &series, const QString &sop, int frame = 0, const QString &sopClass = QStringLiteral("1.2.840.10008.5.1.4.1.1.2"))
{
    return ImageRef{kStudy, series, sopClass, sop, frame};
}

KeyObjectRequest request()
{
    KeyObjectRequest r;
    r.study.studyInstanceUid = kStudy;
    r.study.patientName = QStringLiteral("Key^Images");
    r.study.patientId = QStringLiteral("KO-1");
    r.description = QStringLiteral("Nodule grew; compare with prior");
    r.observerName = QStringLiteral("Reader^Rita");
    r.images = {image(QStringLiteral("2.25.11"), QStringLiteral("2.25.111")), image(QStringLiteral("2.25.11"), QStringLiteral("2.25.112")),
                image(QStringLiteral("2.25.12"), QStringLiteral("2.25.121"), 2, QStringLiteral("1.2.840.10008.5.1.4.1.1.2.1")),
                image(QStringLiteral("2.25.12"), QStringLiteral("2.25.121"), 5, QStringLiteral("1.2.840.10008.5.1.4.1.1.2.1"))};
    return r;
}

} // namespace

class TestKeyObjects : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        Result<QByteArray> kos = writeKeyObjectSelection(request());
        QVERIFY2(kos.isOk(), qPrintable(kos.error().toString()));
        m_bytes = kos.value();
        m_path = m_dir.filePath(QStringLiteral("kos.dcm"));
        QVERIFY(test::writeFile(m_path, m_bytes));
    }

    void readsBackTheMarkedImages()
    {
        Result<KeyObjectSelection> read = readKeyObjectSelection(ByteView(m_bytes));
        QVERIFY2(read.isOk(), qPrintable(read.error().toString()));
        const KeyObjectSelection &k = read.value();
        QCOMPARE(k.title, QStringLiteral("Of Interest"));
        QCOMPARE(k.titleCode, QStringLiteral("113000"));
        QCOMPARE(k.description, request().description);
        QCOMPARE(k.observerName, QStringLiteral("Reader^Rita"));
        QCOMPARE(k.identity.modality, QStringLiteral("KO"));
        QCOMPARE(k.identity.studyInstanceUid, kStudy);
        QCOMPARE(k.images, request().images);  // series from the evidence, frames one by one
        QVERIFY(k.notShown.isEmpty());
    }

    void dsrdumpAcceptsIt()
    {
        const test::ProcessResult r = test::run(QStringLiteral(DSRDUMP_EXECUTABLE), {m_path});
        QVERIFY2(r.ok(), r.err.constData());
        // dsrdump says of every KOS that it cannot check TID 2010's constraints itself: that line is about dsrdump.
        QByteArray err = r.err;
        err.replace("W: Check for template constraints not yet supported\n", "");
        QVERIFY2(!err.contains("E:") && !err.contains("W:"), r.err.constData());
        QVERIFY(r.out.contains("Key Object Selection Document"));
        QVERIFY(r.out.contains("Of Interest"));
    }

    void pydicomReadsTheReferences()
    {
        const test::ProcessResult r = test::run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(SR_READ_SCRIPT), m_path});
        QVERIFY2(r.ok(), r.err.constData());
        const QJsonObject kos = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(kos[QStringLiteral("sopClass")].toString(), QStringLiteral("1.2.840.10008.5.1.4.1.1.88.59"));
        QCOMPARE(kos[QStringLiteral("modality")].toString(), QStringLiteral("KO"));
        QCOMPARE(kos[QStringLiteral("title")].toArray()[0].toString(), QStringLiteral("113000"));
        QCOMPARE(kos[QStringLiteral("texts")].toArray(), QJsonArray{request().description});
        const QJsonArray images = kos[QStringLiteral("images")].toArray();
        QCOMPARE(images.size(), 3);
        QCOMPARE(images[0][QStringLiteral("sop")].toString(), QStringLiteral("2.25.111"));
        QCOMPARE(images[2][QStringLiteral("sop")].toString(), QStringLiteral("2.25.121"));
        QCOMPARE(images[2][QStringLiteral("frames")].toArray(), (QJsonArray{2, 5}));
        QCOMPARE(kos[QStringLiteral("evidence")].toArray(), (QJsonArray{QStringLiteral("2.25.111"), QStringLiteral("2.25.112"), QStringLiteral("2.25.121")}));
    }

    /// A rejection note (IHE IOCM) withdrawing a selection: "Rejected for Quality Reasons", the selection as a
    /// COMPOSITE reference in the evidence; dsrdump accepts it, pydicom reads its title and evidence, and it reads back
    /// as a rejection note, never as key images.
    void rejectionNoteWithdrawsASelection()
    {
        Result<KeyObjectSelection> selection = readKeyObjectSelection(ByteView(m_bytes));
        QVERIFY(selection.isOk());
        KeyObjectRequest note;
        note.study = request().study;
        note.title = KeyObjectTitle::RejectedForQualityReasons;
        note.description = QStringLiteral("Replaced by the key image selection 2.25.77");
        const DicomIdentity &old = selection.value().identity;
        note.documents = {ImageRef{kStudy, old.seriesInstanceUid, old.sopClassUid, old.sopInstanceUid, 0}};
        Result<QByteArray> bytes = writeKeyObjectSelection(note);
        QVERIFY2(bytes.isOk(), qPrintable(bytes.error().toString()));
        const QString path = m_dir.filePath(QStringLiteral("rejection.dcm"));
        QVERIFY(test::writeFile(path, bytes.value()));
        Result<KeyObjectSelection> read = readKeyObjectSelection(ByteView(bytes.value()));
        QVERIFY(read.isOk());
        QVERIFY(read.value().isRejectionNote());
        QCOMPARE(read.value().titleCode, QStringLiteral("113001"));
        QVERIFY(read.value().images.isEmpty());
        QCOMPARE(read.value().documents, note.documents);
        QVERIFY(read.value().notShown.isEmpty());
        QVERIFY(!selection.value().isRejectionNote());

        const test::ProcessResult dump = test::run(QStringLiteral(DSRDUMP_EXECUTABLE), {path});
        QVERIFY2(dump.ok(), dump.err.constData());
        QByteArray err = dump.err;
        err.replace("W: Check for template constraints not yet supported\n", "");
        QVERIFY2(!err.contains("E:") && !err.contains("W:"), dump.err.constData());
        QVERIFY(dump.out.contains("Rejected for Quality Reasons"));
        const test::ProcessResult r = test::run(QStringLiteral(PYTHON3_EXECUTABLE), {QStringLiteral(SR_READ_SCRIPT), path});
        QVERIFY2(r.ok(), r.err.constData());
        const QJsonObject kos = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(kos[QStringLiteral("title")].toArray()[0].toString(), QStringLiteral("113001"));
        QCOMPARE(kos[QStringLiteral("evidence")].toArray(), QJsonArray{old.sopInstanceUid});
    }

    void refusesWhatItCannotWrite()
    {
        KeyObjectRequest r = request();
        r.images[1].studyInstanceUid = QStringLiteral("2.25.999");
        QCOMPARE(writeKeyObjectSelection(r).error().code(), ErrorCode::InvalidArgument);
        r = request();
        r.images.clear();
        QCOMPARE(writeKeyObjectSelection(r).error().code(), ErrorCode::InvalidArgument);
        QVERIFY(!readKeyObjectSelection(ByteView(QByteArray("no"))).isOk());
    }

private:
    QTemporaryDir m_dir;
    QByteArray m_bytes;
    QString m_path;
};

QTEST_GUILESS_MAIN(TestKeyObjects)
#include "tst_keyobjects.moc"

// SPDX-License-Identifier: Apache-2.0
// Every kept fuzz input — the seeds, and each input that once made a target crash or misbehave — through its
// target again, in every build (under ASan and UBSan in the sanitizer run): what was fixed stays fixed.

#include <QDir>
#include <QFile>
#include <QTest>

#include <cstddef>
#include <cstdint>

namespace spectrum::fuzz {
int dicomdecoder(const uint8_t *data, size_t size);
int dicomdocuments(const uint8_t *data, size_t size);
int dicomtext(const uint8_t *data, size_t size);
int multipart(const uint8_t *data, size_t size);
int blobprotocol(const uint8_t *data, size_t size);
int storeconfig(const uint8_t *data, size_t size);
int userfiles(const uint8_t *data, size_t size);
int s3xml(const uint8_t *data, size_t size);
int httpanswer(const uint8_t *data, size_t size);
int syslogframes(const uint8_t *data, size_t size);
} // namespace spectrum::fuzz

class tst_FuzzInputs : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void keptInputsRunCleanly_data();
    void keptInputsRunCleanly();
};

void tst_FuzzInputs::keptInputsRunCleanly_data()
{
    QTest::addColumn<QString>("target");
    QTest::addColumn<QString>("path");
    const QDir inputs(QStringLiteral(SPECTRUM_FUZZ_INPUTS));
    int rows = 0;
    for (const QString &target : inputs.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QDir dir(inputs.filePath(target));
        for (const QString &file : dir.entryList(QDir::Files)) {
            QTest::newRow(qPrintable(target + QLatin1Char('/') + file)) << target << dir.filePath(file);
            ++rows;
        }
    }
    QVERIFY2(rows >= 8, "the kept inputs are missing");
}

void tst_FuzzInputs::keptInputsRunCleanly()
{
    QFETCH(QString, target);
    QFETCH(QString, path);
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    const auto *data = reinterpret_cast<const uint8_t *>(bytes.constData());
    const size_t size = size_t(bytes.size());
    int rc = -1;
    if (target == QLatin1String("dicomdecoder"))
        rc = spectrum::fuzz::dicomdecoder(data, size);
    else if (target == QLatin1String("dicomdocuments"))
        rc = spectrum::fuzz::dicomdocuments(data, size);
    else if (target == QLatin1String("dicomtext"))
        rc = spectrum::fuzz::dicomtext(data, size);
    else if (target == QLatin1String("multipart"))
        rc = spectrum::fuzz::multipart(data, size);
    else if (target == QLatin1String("blobprotocol"))
        rc = spectrum::fuzz::blobprotocol(data, size);
    else if (target == QLatin1String("storeconfig"))
        rc = spectrum::fuzz::storeconfig(data, size);
    else if (target == QLatin1String("userfiles"))
        rc = spectrum::fuzz::userfiles(data, size);
    else if (target == QLatin1String("s3xml"))
        rc = spectrum::fuzz::s3xml(data, size);
    else if (target == QLatin1String("httpanswer"))
        rc = spectrum::fuzz::httpanswer(data, size);
    else if (target == QLatin1String("syslogframes"))
        rc = spectrum::fuzz::syslogframes(data, size);
    else
        QFAIL(qPrintable(QStringLiteral("no fuzz target '%1'").arg(target)));
    QCOMPARE(rc, 0);
}

QTEST_GUILESS_MAIN(tst_FuzzInputs)
#include "tst_fuzzinputs.moc"

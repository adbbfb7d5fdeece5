// SPDX-License-Identifier: Apache-2.0
// DCMTK conditions become our errors in one place, with the right codes.

#include "spectrum/core/error.h"

#include <QTest>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dcerror.h>

using namespace spectrum;

Q_DECLARE_METATYPE(spectrum::ErrorCode)

class tst_DcmtkError : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void mapping_data()
    {
        QTest::addColumn<int>("module");
        QTest::addColumn<int>("code");
        QTest::addColumn<ErrorCode>("expected");
        auto row = [](const char *name, const OFConditionConst &constant, ErrorCode e) {
            const OFCondition c(constant);
            QTest::newRow(name) << int(c.module()) << int(c.code()) << e;
        };
        row("tag not found", EC_TagNotFound, ErrorCode::NotFound);
        row("no codec", EC_CannotChangeRepresentation, ErrorCode::Unsupported);
        row("unknown transfer syntax", EC_UnknownTransferSyntax, ErrorCode::Unsupported);
        row("truncated stream", EC_StreamNotifyClient, ErrorCode::InvalidDicom);
        row("corrupted data", EC_CorruptedData, ErrorCode::InvalidDicom);
        row("illegal call", EC_IllegalCall, ErrorCode::Internal);
        row("bad file name", EC_InvalidFilename, ErrorCode::Io);
    }
    void mapping()
    {
        QFETCH(int, module);
        QFETCH(int, code);
        QFETCH(ErrorCode, expected);
        const Error e = Error::fromDcmtkCondition(quint16(module), quint16(code), "text from DCMTK", QStringLiteral("reading x"));
        QCOMPARE(e.code(), expected);
        QCOMPARE(e.message(), QStringLiteral("reading x: text from DCMTK"));
    }
    void normalIsNoError()
    {
        const OFCondition ok(EC_Normal);
        QVERIFY(!Error::fromDcmtkCondition(ok.module(), ok.code(), ok.text(), QString()).isError());
    }
};

QTEST_GUILESS_MAIN(tst_DcmtkError)
#include "tst_dcmtkerror.moc"

// SPDX-License-Identifier: Apache-2.0
// Our own UIDs: valid DICOM UIDs under 2.25, unique when random, stable when derived from a name.

#include "spectrum/core/uid.h"

#include <QRegularExpression>
#include <QSet>
#include <QTest>

using namespace spectrum;

class tst_Uid : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void uidSyntax()
    {
        QVERIFY(isValidUid(QStringLiteral("1.2.840.10008.1.2.1")));
        QVERIFY(isValidUid(QStringLiteral("2.25.0")));
        QVERIFY(isValidUid(makeUid()));
        QVERIFY(!isValidUid(QString()));
        QVERIFY(!isValidUid(QStringLiteral("1.2.03")));       // leading zero
        QVERIFY(!isValidUid(QStringLiteral("1..2")));         // empty component
        QVERIFY(!isValidUid(QStringLiteral("1.2.")));
        QVERIFY(!isValidUid(QStringLiteral("1.2/../../x")));  // what must never reach a URL path
        QVERIFY(!isValidUid(QStringLiteral("1.") + QString(63, QLatin1Char('1'))));  // 65 characters
    }
    void randomUidsAreValidAndUnique()
    {
        static const QRegularExpression valid(QStringLiteral("^2\\.25\\.(0|[1-9][0-9]*)$"));
        QSet<QString> seen;
        for (int i = 0; i < 1000; ++i) {
            const QString uid = makeUid();
            QVERIFY2(valid.match(uid).hasMatch(), qPrintable(uid));
            QVERIFY(uid.size() <= 64);
            seen.insert(uid);
        }
        QCOMPARE(seen.size(), 1000);
    }
    void nameBasedUidsAreStable()
    {
        QCOMPARE(makeUidFromName("study/1"), makeUidFromName("study/1"));
        QVERIFY(makeUidFromName("study/1") != makeUidFromName("study/2"));
        QVERIFY(makeUidFromName("study/1").startsWith(QStringLiteral("2.25.")));
    }
};

QTEST_GUILESS_MAIN(tst_Uid)
#include "tst_uid.moc"

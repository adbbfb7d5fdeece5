// SPDX-License-Identifier: Apache-2.0
// The filters by name: specs parsed and refused with clear errors, chains that describe themselves, the names
// users know (median for despeckle), plugins loaded at run time and broken ones left out.

#include "filtersupport.h"
#include "spectrum/imaging/filters/bandprocessor.h"
#include "spectrum/imaging/filters/filterregistry.h"

#include "filters/kernels.h"  // private: to run the baseline and the wide versions side by side

#include <QDir>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

using namespace spectrum;
using namespace spectrum::test;

Q_DECLARE_METATYPE(PlaneFormat)

class tst_FilterRegistry : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void registryParsesAndRefuses_data();
    void registryParsesAndRefuses();
    void chainDescribesItself();
    void usersMayTypeTheNamesTheyKnow();
    void pluginFiltersLoadAtRunTime();
    void brokenPluginsAreLeftOutWithAClearError();
};

void tst_FilterRegistry::registryParsesAndRefuses_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("error");  // empty: accepted
    QTest::newRow("defaults") << QStringLiteral("unsharp") << QString();
    QTest::newRow("values") << QStringLiteral("unsharp:amount=1.5,radius=3") << QString();
    QTest::newRow("upper case name") << QStringLiteral("Blur") << QString();
    QTest::newRow("choice") << QStringLiteral("rotate:angle=270") << QString();
    QTest::newRow("unknown filter") << QStringLiteral("frobnicate") << QStringLiteral("no filter 'frobnicate'");
    QTest::newRow("unknown parameter") << QStringLiteral("gaussian:radius=2") << QStringLiteral("no parameter 'radius' (it takes sigma)");
    QTest::newRow("out of range") << QStringLiteral("gaussian:sigma=100") << QStringLiteral("sigma must be between 0.1 and 20");
    QTest::newRow("not a number") << QStringLiteral("gaussian:sigma=lots") << QStringLiteral("sigma must be a number");
    QTest::newRow("not whole") << QStringLiteral("pixelize:size=2.5") << QStringLiteral("size must be a whole number");
    QTest::newRow("bad choice") << QStringLiteral("rotate:angle=45") << QStringLiteral("angle must be one of 90, 180, 270");
    QTest::newRow("no value") << QStringLiteral("zoom:factor") << QStringLiteral("parameter 'factor' needs a value");
}

void tst_FilterRegistry::registryParsesAndRefuses()
{
    QFETCH(QString, spec);
    QFETCH(QString, error);
    const Result<std::shared_ptr<const Filter>> f = FilterRegistry().make(spec);
    if (error.isEmpty()) {
        QVERIFY2(f.isOk(), qPrintable(f.isOk() ? QString() : f.error().toString()));
    } else {
        QVERIFY(!f.isOk());
        QCOMPARE(f.error().code(), ErrorCode::InvalidArgument);
        QVERIFY2(f.error().message().contains(error), qPrintable(f.error().message()));
    }
}

void tst_FilterRegistry::chainDescribesItself()
{
    const FilterChain c = chainOf({QStringLiteral("unsharp:amount=1.5"), QStringLiteral("rotate:angle=90"), QStringLiteral("invert")});
    QCOMPARE(c.description(), QStringLiteral("unsharp:amount=1.5,radius=2; rotate:angle=90; invert"));
    const FilterRegistry r;
    QStringList names;
    for (const FilterInfo &i : r.filters()) {
        names << i.name;
        QCOMPARE(i.origin, QStringLiteral("built-in"));
    }
    QCOMPARE(names.join(QLatin1Char(' ')), QStringLiteral("blur despeckle edge emboss flip gaussian invert oilpaint pixelize rotate sharpen spread unsharp zoom"));
}

void tst_FilterRegistry::usersMayTypeTheNamesTheyKnow()
{
    // "median" is despeckle: the same pixels, and recorded under its one name in what is derived from it.
    const Plane in = randomPlane(format(SampleType::U16, 1, 31, 17, 0, 4095), 9);
    const FilterChain median = chainOf({QStringLiteral("Median")});
    QCOMPARE(median.description(), QStringLiteral("despeckle"));
    QCOMPARE(run(median, in, nullptr).bytes, run(chainOf({QStringLiteral("despeckle")}), in, nullptr).bytes);
    QCOMPARE(chainOf({QStringLiteral("usm:amount=2"), QStringLiteral("sobel"), QStringLiteral("resize:factor=0.5")}).description(),
             QStringLiteral("unsharp:amount=2,radius=2; edge; zoom:factor=0.5,method=bilinear"));
    const FilterRegistry r;
    QCOMPARE(r.find(QStringLiteral("median")), r.find(QStringLiteral("despeckle")));
    // Every alias is one name only: none is another filter's name or alias.
    QStringList all;
    for (const FilterInfo &i : r.filters())
        all << i.name << i.aliases;
    QCOMPARE(QSet<QString>(all.begin(), all.end()).size(), all.size());
    // A wrong name is still refused, naming what there is.
    const auto wrong = r.make(QStringLiteral("medain"));
    QVERIFY(!wrong.isOk());
    QVERIFY(wrong.error().message().contains(QStringLiteral("no filter 'medain'")));
}

void tst_FilterRegistry::pluginFiltersLoadAtRunTime()
{
    FilterRegistry r;
    QVERIFY(!r.make(QStringLiteral("gamma")).isOk());
    const QList<Error> problems = r.loadPlugins(QStringLiteral(FILTER_PLUGIN_DIR));
    QVERIFY2(problems.isEmpty(), qPrintable(problems.value(0).toString()));
    const FilterFactoryPtr gamma = r.find(QStringLiteral("gamma"));
    QVERIFY(gamma);
    const QList<FilterInfo> all = r.filters();
    const auto it = std::find_if(all.begin(), all.end(), [](const FilterInfo &i) { return i.name == QLatin1String("gamma"); });
    QVERIFY(it != all.end());
    QVERIFY(it->origin.endsWith(QStringLiteral("spectrum-gamma.so")));

    Plane p{format(SampleType::U16, 1, 3, 1, 0, 4095), QByteArray()};
    const quint16 v[3] = {0, 1024, 4095};
    p.bytes = QByteArray(reinterpret_cast<const char *>(v), 6);
    Result<FilterChain> chain = r.makeChain({QStringLiteral("gamma:gamma=2"), QStringLiteral("invert")});
    QVERIFY(chain.isOk());
    QCOMPARE(chain.value().description(), QStringLiteral("gamma:gamma=2; invert"));
    const Plane out = run(chain.value(), p, nullptr);
    QCOMPARE(out.at<quint16>(0, 0), quint16(4095));
    QCOMPARE(out.at<quint16>(1, 0), quint16(4095 - std::lround(4095 * std::sqrt(1024.0 / 4095))));
    QCOMPARE(out.at<quint16>(2, 0), quint16(0));
    // Loading the same folder again brings no second "gamma".
    const QList<Error> again = r.loadPlugins(QStringLiteral(FILTER_PLUGIN_DIR));
    QCOMPARE(again.size(), 1);
    QVERIFY(again[0].message().contains(QStringLiteral("already there")));
}

void tst_FilterRegistry::brokenPluginsAreLeftOutWithAClearError()
{
    QTemporaryDir dir;
    QFile junk(dir.filePath(QStringLiteral("junk.so")));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write("not an ELF file");
    junk.close();
    QVERIFY(QFile::copy(QStringLiteral(FILTER_PLUGIN_DIR "/spectrum-gamma.so"), dir.filePath(QStringLiteral("zz-gamma.so"))));
    FilterRegistry r;
    const QList<Error> problems = r.loadPlugins(dir.path());
    QCOMPARE(problems.size(), 1);
    QVERIFY2(problems[0].message().contains(QStringLiteral("junk.so is not a filter plugin")), qPrintable(problems[0].message()));
    QVERIFY(r.find(QStringLiteral("gamma")));  // the good one still loads
}

QTEST_GUILESS_MAIN(tst_FilterRegistry)
#include "tst_filterregistry.moc"

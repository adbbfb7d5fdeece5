// SPDX-License-Identifier: Apache-2.0
// The program log: each line with its UTC time to the millisecond, the program, its level and category; --log-level
// chooses what is written; the file is private and rotated by size; options come from the command line as the
// programs take them.

#include "spectrum/core/logging.h"
#include "spectrum/core/programlog.h"

#include <QCommandLineParser>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace spectrum;

namespace {

QStringList linesOf(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

} // namespace

class tst_ProgramLog : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void cleanup()
    {
        closeProgramLog();
    }

    void linesSayWhenWhatAndWhere()
    {
        QTemporaryDir dir;
        ProgramLogOptions o;
        o.program = QStringLiteral("spectrum-test");
        o.file = dir.filePath(QStringLiteral("logs/spectrum-test.log"));
        QVERIFY(!installProgramLog(o).isError());
        QCOMPARE(programLogFile(), o.file);
        qCInfo(lcStores) << "opened study" << 42;
        qCDebug(lcStores) << "a detail no one asked for";
        qCWarning(lcTransfer, "the server is slow");
        qCritical("plain error\nwith a second line");
        closeProgramLog();
        const QStringList lines = linesOf(o.file);
        QCOMPARE(lines.size(), 4);  // info, warning, error (two lines): not the debug message
        static const QRegularExpression line(QStringLiteral("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z spectrum-test\\[\\d+\\] (\\w+) (.*)$"));
        QRegularExpressionMatch m = line.match(lines.at(0));
        QVERIFY2(m.hasMatch(), qPrintable(lines.at(0)));
        QCOMPARE(m.captured(1), QStringLiteral("info"));
        QCOMPARE(m.captured(2), QStringLiteral("spectrum.stores: opened study 42"));
        m = line.match(lines.at(1));
        QCOMPARE(m.captured(1), QStringLiteral("warning"));
        QCOMPARE(m.captured(2), QStringLiteral("spectrum.transfer: the server is slow"));
        m = line.match(lines.at(2));
        QCOMPARE(m.captured(1), QStringLiteral("error"));
        QCOMPARE(m.captured(2), QStringLiteral("plain error"));
        QCOMPARE(lines.at(3), QStringLiteral("    with a second line"));
        // Private: the messages may name studies.
        QCOMPARE(QFileInfo(o.file).permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther), QFileDevice::Permissions());
        QCOMPARE(QFileInfo(dir.filePath(QStringLiteral("logs"))).permissions() & (QFileDevice::ExeOther | QFileDevice::ReadOther), QFileDevice::Permissions());
    }

    void theLevelChoosesWhatIsWritten()
    {
        QTemporaryDir dir;
        ProgramLogOptions o;
        o.program = QStringLiteral("p");
        o.file = dir.filePath(QStringLiteral("p.log"));
        o.level = LogLevel::Debug;
        QVERIFY(!installProgramLog(o).isError());
        qCDebug(lcImaging) << "debug now";
        closeProgramLog();
        QCOMPARE(linesOf(o.file).size(), 1);
        QVERIFY(linesOf(o.file).first().endsWith(QStringLiteral("debug spectrum.imaging: debug now")));

        o.level = LogLevel::Error;
        QVERIFY(!installProgramLog(o).isError());
        qCWarning(lcImaging) << "a warning";
        qCCritical(lcImaging) << "an error";
        closeProgramLog();
        QCOMPARE(linesOf(o.file).size(), 2);
        QVERIFY(linesOf(o.file).last().endsWith(QStringLiteral("error spectrum.imaging: an error")));
    }

    void aFullFileIsRotated()
    {
        QTemporaryDir dir;
        ProgramLogOptions o;
        o.program = QStringLiteral("p");
        o.file = dir.filePath(QStringLiteral("p.log"));
        o.rotateBytes = 2000;
        o.keepRotated = 2;
        QVERIFY(!installProgramLog(o).isError());
        for (int i = 0; i < 200; ++i)
            qCInfo(lcCore) << "line" << i << QString(40, QLatin1Char('x'));
        closeProgramLog();
        QVERIFY(QFileInfo(o.file).size() <= 2200);
        QVERIFY(QFileInfo::exists(o.file + QStringLiteral(".1")));
        QVERIFY(QFileInfo::exists(o.file + QStringLiteral(".2")));
        QVERIFY(!QFileInfo::exists(o.file + QStringLiteral(".3")));
        // The newest line is in the file, or in .1 when it was the one that filled it; nothing between is lost.
        const QStringList recent = linesOf(o.file + QStringLiteral(".2")) + linesOf(o.file + QStringLiteral(".1")) + linesOf(o.file);
        QVERIFY(!recent.isEmpty());
        QVERIFY(recent.last().contains(QStringLiteral("line 199 ")));
        for (int i = 1; i < recent.size(); ++i) {
            const int a = recent.at(i - 1).section(QLatin1String("line "), 1).section(QLatin1Char(' '), 0, 0).toInt();
            const int b = recent.at(i).section(QLatin1String("line "), 1).section(QLatin1Char(' '), 0, 0).toInt();
            QCOMPARE(b, a + 1);
        }
    }

    void aFileThatCannotBeWrittenIsSaid()
    {
        ProgramLogOptions o;
        o.program = QStringLiteral("p");
        o.file = QStringLiteral("/proc/no-such-folder/p.log");
        const Error e = installProgramLog(o);
        QVERIFY(e.isError());
        QVERIFY2(e.message().contains(QStringLiteral("/proc/no-such-folder")), qPrintable(e.message()));
        QCOMPARE(programLogFile(), QString());
    }

    void optionsFromTheCommandLine()
    {
        QStringList args{QStringLiteral("spectrum-cli"), QStringLiteral("query"), QStringLiteral("--log-level"), QStringLiteral("debug"),
                         QStringLiteral("--store"), QStringLiteral("pacs"), QStringLiteral("--log-file=/tmp/x.log")};
        Result<ProgramLogOptions> o = takeProgramLogOptions(args, QStringLiteral("spectrum-cli"));
        QVERIFY(o.isOk());
        QCOMPARE(args, (QStringList{QStringLiteral("spectrum-cli"), QStringLiteral("query"), QStringLiteral("--store"), QStringLiteral("pacs")}));
        QCOMPARE(o.value().level, LogLevel::Debug);
        QCOMPARE(o.value().stderrLevel, std::optional<LogLevel>(LogLevel::Debug));
        QCOMPARE(o.value().file, QStringLiteral("/tmp/x.log"));

        QStringList wrong{QStringLiteral("spectrum-cli"), QStringLiteral("--log-level"), QStringLiteral("loud")};
        QVERIFY(!takeProgramLogOptions(wrong, QStringLiteral("spectrum-cli")).isOk());
        QStringList missing{QStringLiteral("spectrum-cli"), QStringLiteral("--log-file")};
        QVERIFY(!takeProgramLogOptions(missing, QStringLiteral("spectrum-cli")).isOk());

        QCommandLineParser p;
        addProgramLogOptions(p);
        QVERIFY(p.parse({QStringLiteral("spectrum-blobd"), QStringLiteral("--log-level=warning")}));
        Result<ProgramLogOptions> fromParser = programLogOptions(p, QStringLiteral("spectrum-blobd"));
        QVERIFY(fromParser.isOk());
        QCOMPARE(fromParser.value().level, LogLevel::Warning);
        QCOMPARE(fromParser.value().file, QString());  // the default folder's
    }

    void theDefaultFolder()
    {
        qputenv("SPECTRUM_LOG_DIR", "/var/tmp/spectrum-logs");
        QCOMPARE(logDirectory(), QStringLiteral("/var/tmp/spectrum-logs"));
        qunsetenv("SPECTRUM_LOG_DIR");
        qputenv("LOGS_DIRECTORY", "/var/log/spectrum-blobd");
        QCOMPARE(logDirectory(), QStringLiteral("/var/log/spectrum-blobd"));
        qunsetenv("LOGS_DIRECTORY");
        qputenv("XDG_STATE_HOME", "/home/u/.state");
        QCOMPARE(logDirectory(), QStringLiteral("/home/u/.state/spectrum/log"));
    }
};

QTEST_GUILESS_MAIN(tst_ProgramLog)
#include "tst_programlog.moc"

// SPDX-License-Identifier: Apache-2.0
// docs/ARCHITECTURE.md stays the map of the code: every file it names exists, every class, function or member it
// names is declared in the sources, a name it places in a file is in that file, and every command file of the CLI
// and every kind of archive is on the map. A move or a rename that leaves the map behind fails here.

#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

namespace {

const QString kRoot = QStringLiteral(SPECTRUM_SOURCE_DIR);

QString readText(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

/// The project's own files (relative paths), without build trees, the venv or VCS data.
QStringList projectFiles()
{
    QStringList out;
    QDirIterator it(kRoot, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString rel = QDir(kRoot).relativeFilePath(it.next());
        if (rel.startsWith(QLatin1String("build")) || rel.startsWith(QLatin1String(".git/")) || rel.contains(QLatin1String("test-venv")))
            continue;
        out << rel;
    }
    return out;
}

} // namespace

class tst_ArchitectureDoc : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        m_doc = readText(kRoot + QStringLiteral("/docs/ARCHITECTURE.md"));
        QVERIFY(m_doc.size() > 10000);
        m_files = projectFiles();
        for (const QString &f : std::as_const(m_files)) {
            m_byName[QFileInfo(f).fileName()] << f;
            if (f.endsWith(QLatin1String(".h")) || f.endsWith(QLatin1String(".cpp")))
                m_sources.insert(f, readText(kRoot + QLatin1Char('/') + f));
        }
        static const QRegularExpression word(QStringLiteral("[A-Za-z_]\\w*"));
        for (const QString &text : std::as_const(m_sources)) {
            for (auto m = word.globalMatch(text); m.hasNext();)
                m_words.insert(m.next().captured());
        }
        static const QRegularExpression tick(QStringLiteral("`([^`\\n]+)`"));
        for (auto m = tick.globalMatch(m_doc); m.hasNext();)
            m_ticks << m.next().captured(1);
        QVERIFY(m_ticks.size() > 300);
    }

    // A file named (a path, or a bare file name) is one of the project's.
    void everyFileNamedExists()
    {
        static const QRegularExpression pathLike(QStringLiteral("^[\\w./-]+\\.(h|cpp|md|py|sh|cmake|txt|ini|conf|service)$"));
        QStringList missing;
        for (const QString &t : std::as_const(m_ticks)) {
            for (QString token : t.split(QRegularExpression(QStringLiteral("[\\s,()]+")), Qt::SkipEmptyParts)) {
                if (!pathLike.match(token).hasMatch() || token.startsWith(QLatin1Char('/')))
                    continue;  // an installed path (/etc/…, /usr/…) is the package's, checked by make package-check
                if (token.contains(QLatin1Char('/')) ? !fileExists(token) : !m_byName.contains(token) && !isSystemHeader(token))
                    missing << token;
            }
        }
        missing.removeDuplicates();
        QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("named in ARCHITECTURE.md, not in the tree: ") + missing.join(QStringLiteral(", "))));
    }

    // A class, function or member named (`StorageScp`, `StorageScp::addClaim`, `renderFrame`) is in the sources.
    void everySymbolNamedIsDeclared()
    {
        static const QRegularExpression symbol(QStringLiteral("^(?:[A-Z][a-z]\\w*|[a-z]+[A-Z]\\w*)(?:::[A-Za-z_]\\w*)*(?:<[^>]*>)?(?:\\(\\))?$"));
        QStringList missing;
        for (const QString &t : std::as_const(m_ticks)) {
            if (!symbol.match(t).hasMatch())
                continue;
            QString name = t.section(QLatin1Char('<'), 0, 0).section(QLatin1Char('('), 0, 0);
            const QStringList parts = name.split(QStringLiteral("::"));
            bool found = true;
            for (const QString &p : parts)
                found = found && declared(p);
            if (!found)
                missing << t;
        }
        missing.removeDuplicates();
        QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("named in ARCHITECTURE.md, declared nowhere: ") + missing.join(QStringLiteral(", "))));
    }

    // "`file.cpp` `symbol`" and "`symbol` in `file.cpp`": the symbol is in that file (or its header/source twin).
    void whatIsPlacedInAFileIsThere()
    {
        static const QRegularExpression placed(QStringLiteral(
            "`([\\w/.-]+\\.(?:h|cpp))`,? (?:and )?`([A-Za-z_][\\w:]*)(?:\\(\\))?`|`([A-Za-z_][\\w:]*)(?:\\(\\))?` (?:is )?in `([\\w/.-]+\\.(?:h|cpp))`"));
        QStringList wrong;
        int checked = 0;
        for (auto m = placed.globalMatch(m_doc); m.hasNext();) {
            const QRegularExpressionMatch g = m.next();
            const QString file = g.captured(1).isEmpty() ? g.captured(4) : g.captured(1);
            const QString name = (g.captured(2).isEmpty() ? g.captured(3) : g.captured(2)).section(QStringLiteral("::"), -1);
            if (QRegularExpression(QStringLiteral("\\.(h|cpp)$")).match(name).hasMatch())
                continue;
            ++checked;
            bool there = false;
            for (const QString &f : filesNamed(file)) {
                const QString twin = f.endsWith(QLatin1String(".h")) ? f.chopped(2) + QStringLiteral(".cpp") : f.chopped(4) + QStringLiteral(".h");
                there = there || m_sources.value(f).contains(name) || m_sources.value(twin).contains(name);
            }
            if (!there)
                wrong << QStringLiteral("%1 is not in %2").arg(name, file);
        }
        QVERIFY(checked > 5);
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join(QStringLiteral("; "))));
    }

    // The map has room for everything of two kinds a newcomer adds to: a CLI command file, an archive.
    void everyCommandFileAndArchiveIsOnTheMap()
    {
        QStringList left;
        for (const QString &f : std::as_const(m_files)) {
            if (f.startsWith(QLatin1String("app/spectrum-cli/")) && f.endsWith(QLatin1String("commands.cpp")) && !m_doc.contains(QFileInfo(f).fileName()))
                left << f;
        }
        static const QRegularExpression archive(QStringLiteral("class (\\w+Archive)\\s*(?:final\\s*)?:\\s*public\\s+(?:Query)?Archive\\b"));
        for (auto it = m_sources.constBegin(); it != m_sources.constEnd(); ++it) {
            for (auto m = archive.globalMatch(it.value()); m.hasNext();) {
                const QString name = m.next().captured(1);
                if (!m_doc.contains(name))
                    left << name;
            }
        }
        QVERIFY2(left.isEmpty(), qPrintable(QStringLiteral("not on the map: ") + left.join(QStringLiteral(", "))));
    }

    // The guides' links to files of the tree (README.md, docs/*.md, stores/STORES.md…) lead somewhere: a section
    // moved to another file takes its links' targets along.
    void everyLinkOfTheGuidesLeadsToAFile()
    {
        static const QRegularExpression link(QStringLiteral("\\]\\(([^)\\s#]+)(#[^)\\s]*)?\\)"));
        QStringList broken;
        int checked = 0;
        for (const QString &f : std::as_const(m_files)) {
            if (!f.endsWith(QLatin1String(".md")) || f.startsWith(QLatin1String("tests/fuzz")))
                continue;
            const QString text = readText(kRoot + QLatin1Char('/') + f);
            for (auto m = link.globalMatch(text); m.hasNext();) {
                const QString target = m.next().captured(1);
                if (target.contains(QLatin1String("://")) || target.startsWith(QLatin1String("mailto:")))
                    continue;
                ++checked;
                const QString resolved = QDir::cleanPath(kRoot + QLatin1Char('/') + QFileInfo(f).path() + QLatin1Char('/') + target);
                if (!QFileInfo::exists(resolved))
                    broken << QStringLiteral("%1 → %2").arg(f, target);
            }
        }
        QVERIFY(checked > 30);
        QVERIFY2(broken.isEmpty(), qPrintable(QStringLiteral("links to nothing: ") + broken.join(QStringLiteral(", "))));
    }

private:
    bool fileExists(const QString &path) const
    {
        if (QFileInfo::exists(kRoot + QLatin1Char('/') + path))
            return true;
        return std::any_of(m_files.begin(), m_files.end(), [&](const QString &f) { return f.endsWith(QLatin1Char('/') + path); });
    }
    QStringList filesNamed(const QString &file) const
    {
        if (!file.contains(QLatin1Char('/')))
            return m_byName.value(file);
        QStringList out;
        for (const QString &f : m_files) {
            if (f == file || f.endsWith(QLatin1Char('/') + file))
                out << f;
        }
        return out;
    }
    static bool isSystemHeader(const QString &name)
    {
        // DCMTK's and OpenJPEG's headers the map names where it tells what we lean on.
        return name == QLatin1String("dulstruc.h") || name == QLatin1String("dstorscp.h") || name == QLatin1String("openjpeg.h");
    }
    /// In the sources at all (a word of them): a name that went with a rename or a removal is in none.
    bool declared(const QString &name) const { return m_words.contains(name); }

    QString m_doc;
    QStringList m_ticks;
    QStringList m_files;
    QHash<QString, QStringList> m_byName;
    QHash<QString, QString> m_sources;
    QSet<QString> m_words;
};

QTEST_GUILESS_MAIN(tst_ArchitectureDoc)
#include "tst_architecturedoc.moc"

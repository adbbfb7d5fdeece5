// SPDX-License-Identifier: Apache-2.0
// spectrum-cli: Spectrum without the GUI — the demo studies, the disk cache, images and filters, blob stores and
// the configured archives. Wiring only: the commands (commands.h) call the libraries, which do the work.

#include "commands.h"
#include "output.h"

#include "spectrum/imaging/codecs/dicomdecoder.h"

#include <QCoreApplication>

#include <cstdio>
#include <cstring>

using namespace spectrum;
using spectrum::cli::Command;

namespace {

QList<Command> allCommands()
{
    return cli::cacheCommands() + cli::imageCommands() + cli::blobCommands() + cli::storeCommands() + cli::archiveCommands() + cli::prefetchCommands() + cli::findingsCommands() + cli::reformatCommands();
}

/// The usage, from the command table (help2man makes the manual page of it: docs/man).
void usage(std::FILE *to)
{
    std::fprintf(to,
                 "Usage: spectrum-cli COMMAND [OPTIONS]\n"
                 "Spectrum's command line: demo studies, the workstation's disk cache, images and filters, blob stores and the\n"
                 "configured archives (DICOMweb, DIMSE, blob servers, folders). COMMAND --help gives a command's options.\n"
                 "\n"
                 "Commands:\n");
    for (const Command &c : allCommands()) {
        const QString head = QStringLiteral("%1 %2").arg(QLatin1String(c.name), QString::fromUtf8(c.synopsis)).trimmed();  // UTF-8: "…"
        if (head.size() <= 20)  // two spaces at least before the summary (help2man reads them as the break)
            std::fprintf(to, "  %-22s %s\n", qPrintable(head), c.summary);
        else
            std::fprintf(to, "  %s\n  %-22s %s\n", qPrintable(head), "", c.summary);
    }
    std::fprintf(to,
                 "\n"
                 "Options:\n"
                 "  -h, --help             this help\n"
                 "  -v, --version          the version\n"
                 "\n"
                 "Environment:\n"
                 "  SPECTRUM_CACHE_DIR       the disk cache's folder (default: the user's data folder)\n"
                 "  SPECTRUM_CACHE_BUDGET_MB the disk cache's size\n"
                 "  SPECTRUM_CONFIG          the store configuration file (default: ~/.config/Spectrum/stores.json)\n"
                 "  SPECTRUM_TOKEN           the token for blob:// servers (or --token-file)\n"
                 "  SPECTRUM_FILTER_PATH     more folders of filter plugins, separated by ':'\n"
                 "\n"
                 "Exit status: 0 done, 1 failed, 2 wrong usage.\n");
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);  // no GUI library at all: images are written with libpng (imagefile.h)
    QCoreApplication::setOrganizationName(QStringLiteral("Spectrum"));
    QCoreApplication::setApplicationName(QStringLiteral("Spectrum"));
    QCoreApplication::setApplicationVersion(QStringLiteral(SPECTRUM_VERSION));
    QStringList args = app.arguments();
    if (args.size() < 2) {
        usage(stderr);
        return 2;
    }
    const QString command = args.at(1);
    if (command == QLatin1String("--help") || command == QLatin1String("-h") || command == QLatin1String("help")) {
        usage(stdout);
        return 0;
    }
    if (command == QLatin1String("--version") || command == QLatin1String("-v")) {
        std::printf("spectrum-cli %s\n", SPECTRUM_VERSION);
        return 0;
    }
    const QList<Command> commands = allCommands();
    const auto it = std::find_if(commands.begin(), commands.end(), [&](const Command &c) { return command == QLatin1String(c.name); });
    if (it == commands.end())
        return cli::fail(QStringLiteral("unknown command '%1' (spectrum-cli --help lists them)").arg(command), 2);
    // Meanwhile the command starts: the first instance then need not wait. Not for a fetch: over DICOMweb or
    // from a blob store it indexes instances without DCMTK (identityscan.h); over DIMSE it preloads itself.
    if (it->needsDictionary)
        preloadDicomDictionary();
    args.removeAt(1);  // leaves "spectrum-cli COMMAND <options…>" for the command's parser
    args[0] = QStringLiteral("spectrum-cli ") + command;
    return it->run(args);
}

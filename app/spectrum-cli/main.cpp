// SPDX-License-Identifier: Apache-2.0
// spectrum-cli: Spectrum without the GUI — the demo studies, the disk cache, images and filters, blob stores and
// the configured archives. Wiring only: the commands (commands.h) call the libraries, which do the work.

#include "commands.h"
#include "output.h"

#include "spectrum/core/audit/auditevents.h"
#include "spectrum/core/programlog.h"
#include "spectrum/imaging/codecs/dicomdecoder.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/signin/signin.h"
#include "spectrum/transfer/audit/audittrail.h"

#include <QCoreApplication>

#include <cstdio>
#include <cstring>

using namespace spectrum;
using spectrum::cli::Command;

namespace {

QList<Command> allCommands()
{
    return cli::cacheCommands() + cli::imageCommands() + cli::blobCommands() + cli::storeCommands() + cli::archiveCommands() + cli::prefetchCommands() + cli::findingsCommands() + cli::reformatCommands() + cli::signInCommands();
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
                 "  --log-level LEVEL      what is logged: debug, info, warning or error (default: info to the log file,\n"
                 "                         warnings and errors to stderr; a level given applies to both)\n"
                 "  --log-file FILE        the log file (default: ~/.local/state/spectrum/log/spectrum-cli.log); - for none\n"
                 "\n"
                 "Environment:\n"
                 "  SPECTRUM_CACHE_DIR       the disk cache's folder (default: the user's data folder)\n"
                 "  SPECTRUM_CACHE_BUDGET_MB the disk cache's size\n"
                 "  SPECTRUM_CONFIG          the store configuration file (default: ~/.config/Spectrum/stores.json)\n"
                 "  SPECTRUM_TOKEN           the token for blob:// servers (or --token-file)\n"
                 "  SPECTRUM_FILTER_PATH     more folders of filter plugins, separated by ':'\n"
                 "  SPECTRUM_LOG_DIR         the log file's folder; SPECTRUM_LOG_LEVEL the level\n"
                 "  SPECTRUM_BROWSER         the browser login opens (default: the desktop's, through xdg-open)\n"
                 "  SPECTRUM_KEYRING         off: the sign-in is kept sealed in sign-in.json, not in the desktop's keyring\n"
                 "  SPECTRUM_SYSTEM_CONFIG   the hospital's configuration (default: /etc/spectrum/stores.json): its \"audit\"\n"
                 "                           repository receives an audit message for every query, retrieve, send and export\n"
                 "\n"
                 "Exit status: 0 done, 1 failed, 2 wrong usage.\n");
}

/// The configuration the command will read (--config FILE, else the default): its audit section is followed.
QString configPathOf(const QStringList &args)
{
    QString path = StoreConfigFile::defaultPath();
    for (int i = 1; i < args.size(); ++i) {
        if (args.at(i) == QLatin1String("--config") && i + 1 < args.size())
            path = args.at(i + 1);
        else if (args.at(i).startsWith(QLatin1String("--config=")))
            path = args.at(i).mid(9);
    }
    return path;
}

/// The sign-ins of the configuration's stores that ask for one, going on from what the last program kept (their
/// access tokens renewed when they are about to expire) before the command asks anything of them.
void resumeSignIns(const QString &configPath, const QString &command, const QStringList &args)
{
    if (command == QLatin1String("login") || command == QLatin1String("logout"))
        return;
    for (const QString &a : args) {
        if (a == QLatin1String("--help") || a == QLatin1String("-h"))
            return;  // nothing is asked of a store
    }
    Result<StoreConfigFile> config = StoreConfigFile::load(configPath);
    if (!config.isOk())
        return;
    for (const StoreConfig &s : config.value().stores()) {
        if (SignIn *signIn = SignIn::forStore(s, config.value())) {
            if (Error e = runSync(signIn->resume()).error(); e.isError())
                std::fprintf(stderr, "spectrum-cli: %s\n", qPrintable(e.message()));
        }
    }
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
    Result<ProgramLogOptions> log = takeProgramLogOptions(args, QStringLiteral("spectrum-cli"));
    if (!log.isOk())
        return cli::fail(log.error().message(), 2);
    installProgramLog(log.value());
    // The hospital's audit trail: every command that reaches an archive or a patient's images is on it.
    Result<AuditConfig> auditConfig = auditConfigToFollow(configPathOf(args));
    Result<std::unique_ptr<AuditTrail>> trail = auditConfig.isOk() ? startAuditTrail(auditConfig.value(), QStringLiteral("spectrum-cli"), 1)
                                                                   : Result<std::unique_ptr<AuditTrail>>(auditConfig.error());
    if (!trail.isOk())
        return cli::fail(QStringLiteral("the audit trail cannot be kept, so nothing is done: %1").arg(trail.error().message()));
    audit(auditevents::applicationActivity(true));
    resumeSignIns(configPathOf(args), command, args);
    const int status = it->run(args);
    audit(auditevents::applicationActivity(false, status == 0 ? AuditMessage::Outcome::Success : AuditMessage::Outcome::MinorFailure,
                                           status == 0 ? QString() : QStringLiteral("%1 ended with status %2").arg(command).arg(status)));
    if (trail.value())
        trail.value()->flush(3000);  // what the repository does not take now stays in the spool, for the next command
    return status;
}

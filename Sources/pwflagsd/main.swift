import Executors
import FlagsCore
import FlagsDaemon
import FoundationEssentials
import PWFlagsCLI
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Parses the options, loads the configuration, runs the daemon; exit 0 at a clean stop, 1 when it cannot
/// start or one of its services ended while it served, 2 on a usage error.
func main() async -> Int32 {
    let environment = ProcessInfo.processInfo.environment
    let options: DaemonOptions
    switch DaemonOptions.parse(CommandLine.arguments.dropFirst()) {
    case .success(let parsed): options = parsed
    case .failure(let error):
        writeStandardError("pwflagsd: \(error.message)\n\(DaemonOptions.usage)\n")
        return 2
    }
    switch options.action {
    case .help:
        print(DaemonOptions.usage)
        return 0
    case .version:
        print("pwflagsd \(PWFlagsVersion.current)")
        return 0
    case .run, .checkConfig:
        break
    }
    let configuration: Configuration
    // --check-config also reads the files the configuration names that the daemon would read only later.
    let load = options.action == .checkConfig ? ConfigurationLoader.check : ConfigurationLoader.load
    switch load(options.configPath, options.overrides, environment) {
    case .success(let loaded): configuration = loaded
    case .failure(let errors):
        writeStandardError("pwflagsd: invalid configuration:\n\(errors.description)\n")
        return 1
    }
    if options.action == .checkConfig {
        // From a shell there is no $CREDENTIALS_DIRECTORY: the token is read where the service's unit loads it.
        let unitCredential = UnitCredentialLookup().credential(forConfigPath: options.configPath)
        print(
            ConfigurationLoader.renderEffective(
                configuration, environment: environment, unitCredential: unitCredential),
            terminator: "")
        return 0
    }
    MallocTuning.apply(environment: environment)
    let logger = Logger(level: configuration.logLevel, environment: environment)
    // Before the daemon reads the API token.
    for problem in CoreDumps.disable() { logger.warning("core files may carry the API token: \(problem)") }
    do {
        let daemon = Daemon(configuration: configuration, environment: environment, logger: logger) {
            ConfigurationLoader.load(
                configPath: options.configPath, overrides: options.overrides, environment: environment)
        }
        try await daemon.run()
        return 0
    } catch is ServiceGroupError {
        // Logged when the service ended, with its name and why: the daemon started, served, and stopped on it.
        return 1
    } catch {
        logger.error("cannot start: \(error)")
        return 1
    }
}

/// Writes `text` to stderr as it is, unbuffered.
func writeStandardError(_ text: String) {
    // Nothing to do when stderr is gone: the exit status still tells.
    try? Descriptor.writeAll(STDERR_FILENO, Array(text.utf8))
}

// The Swift runtime reads the command line from /proc/self/cmdline: without /proc (a bare chroot) it finds no
// arguments at all, not even the program's name. Neither the daemon nor the CLI can tell then what was asked
// (`pwflags get`, `pwflagsd --version`), so nothing runs: before, a root `pwflags --version` there started a
// daemon on the default configuration.
if CommandLine.arguments.isEmpty {
    writeStandardError("pwflagsd: cannot read the command line: /proc is not mounted (/proc/self/cmdline)\n")
    exit(2)
}
// Started as `pwflags` (the package links /usr/bin/pwflags to this binary): the CLI, not the daemon.
if CLI.isInvokedAsCLI(CommandLine.arguments.first) {
    exit(CLI.run(Array(CommandLine.arguments.dropFirst())))
}
// The daemon's tasks run on threads of its own, never on libdispatch's, whose workqueue monitor would wake it
// every second (docs/architecture.md, Threads). Installed before the first task starts, which is why this file
// has no top-level `await`: the main task is started here, on the main actor, whose executor is the main thread.
// Signals blocked by whoever started the daemon (a parent that spawned it from a thread blocking them) are let
// through: every thread inherits this mask, and the signals the daemon handles (SIGTERM, SIGHUP) must reach one.
// libdispatch's main thread used to wait in sigsuspend with all of them open; the main executor's does not.
var noSignals = sigset_t()
sigemptyset(&noSignals)
sigprocmask(SIG_SETMASK, &noSignals, nil)
ProcessExecutors.install(name: "pwflagsd")
Task { exit(await main()) }
ProcessExecutors.runMainExecutor()

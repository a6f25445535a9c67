public import FlagsCore
import FoundationEssentials
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The whole daemon: builds the services from a configuration, serves until SIGTERM or SIGINT, shuts down.
public final class Daemon: Sendable {
    private let configuration: Configuration
    private let environment: [String: String]
    private let logger: Logger
    private let load: Reloader.Load

    /// `load` re-reads the configuration for a reload, exactly as at startup.
    public init(
        configuration: Configuration,
        environment: [String: String],
        logger: Logger,
        load: @escaping @Sendable () -> Result<Configuration, ConfigurationErrors>
    ) {
        self.configuration = configuration
        self.environment = environment
        self.logger = logger
        self.load = load
    }

    /// Runs until a shutdown signal, then shuts down gracefully.
    ///
    /// - Throws: `StartError` when the daemon cannot start (before READY=1); `ServiceGroupError`, after a graceful
    ///   shutdown of the rest, when one of its services ended while it was serving.
    public func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        let signals: AsyncStream<Int32>
        do {
            signals = try SignalWatcher.signals([SIGTERM, SIGINT, SIGHUP])
        } catch {
            throw StartError.signalsUnavailable(cause: error)
        }

        let stateDirectory = StateDirectory(path: configuration.resolvedStateDirectory(environment: environment))
        switch stateDirectory.prepare() {
        case nil: break
        case .unusable(let problem):
            logger.warning("the state directory is unusable; nothing survives a restart: \(problem)")
        case .untrusted(let problem):
            throw StartError.stateDirectoryUntrusted(reason: problem)
        }
        let stale = stateDirectory.removeStaleTemporaries()
        if !stale.isEmpty {
            logger.notice(
                "removed the temporary files of writes a previous daemon did not finish",
                ["FILES": stale.joined(separator: ",")])
        }
        // Overrides apply from the first flag served: no reader ever sees the source's value of an overridden key.
        let store = FlagStore(overrides: LocalOverrides.load(from: stateDirectory, logger: logger))
        let overrides = LocalOverrides(store: store, directory: stateDirectory, logger: logger)
        // Before anything fills the store, so that it sees every change since the start.
        let changes = FlagChangeLog(observing: store)
        let metrics = DaemonMetrics()
        let evaluations = EvaluationTally()
        let policy = CallPolicy(access: AccessPolicy.make(for: configuration, logger: logger), logger: logger)
        let reloader = Reloader(
            configuration: configuration,
            load: load,
            environment: environment,
            store: store,
            stateDirectory: stateDirectory,
            logger: logger,
            metrics: metrics,
            evaluations: evaluations,
            policy: policy
        )
        await reloader.prepare()
        let telemetrySettings = TelemetryExporter.prepare(
            evaluations, configuration: configuration, environment: environment,
            instanceId: reloader.stacks.current.hwid)

        let activated = Systemd.activatedSockets()
        let (listenFD, ownedPath) = try openSocket(activated)
        let watchdog = Systemd.watchdogInterval()
        let server: SocketServer
        let controller = FlagService(
            store: store, stacks: reloader.stacks, reload: { await reloader.reload() }, overrides: overrides,
            policy: policy, changes: changes, metrics: metrics, evaluations: evaluations)
        do {
            server = try SocketServer(
                listenFD: listenFD,
                store: store,
                controller: controller,
                limits: ServerLimits(configuration),
                logger: logger,
                heartbeat: watchdog.map { .init(interval: $0 / 2, action: { Systemd.notifyWatchdog() }) }
            )
        } catch {
            close(listenFD)
            throw StartError.serverUnavailable(cause: error)
        }
        let ofrep = makeOFREPServer(
            configuration: configuration, store: store, activated: activated.ofrep, logger: logger, metrics: metrics,
            evaluations: evaluations)
        let varlink = makeVarlinkServer(
            configuration: configuration, store: store, controller: controller, activated: activated.varlink,
            logger: logger)
        let status = SystemdStatus(store: store) { reloader.stacks.current }
        let bus = makeBusServer(
            configuration: configuration, store: store, controller: controller, socketPath: configuration.socketPath,
            statusLine: { status.line() }, logger: logger)
        logger.notice(
            "pwflagsd \(PWFlagsVersion.current) serving",
            ["SOCKET": ownedPath ?? "(socket activation)", "SOURCE": status.line()]
        )
        let clockWatcher = makeClockWatcher {
            await reloader.stacks.current.refresher.wallClockChanged()
            status.update()
        }
        Systemd.notifyReady(status: status.line())
        await reloader.use(server: server)
        if let varlink { await reloader.use(varlink: varlink.server) }

        // The timers start after READY=1: the first request (and the HTTP stack's start-up) never delays it.
        // The reloader uses the server (a reload changes its limits), so it comes after it and stops before it:
        // requests to Pushwoosh are not worth waiting for at shutdown, their callers get status 0 at once, and
        // then the server answers the lines it holds. The status updates and the clock watcher stop last.
        // The metrics file's writer and the telemetry's exporter ask the server for its families, so they stop
        // before the server does.
        let metricsWriter = MetricsFileWriter(server: server, reloader: reloader, logger: logger)
        let telemetry = TelemetryExporter(
            server: server, reloader: reloader, tally: evaluations, metrics: metrics, environment: environment,
            initial: telemetrySettings, logger: logger)
        var services: [any Service] = [server]
        if let ofrep { services.append(ofrep.server) }
        if let bus { services.append(bus) }
        if let varlink { services.append(varlink.server) }
        services += [reloader, status]
        if let clockWatcher { services.append(clockWatcher) }
        services += [metricsWriter, telemetry]
        let logger = self.logger
        let ended: ServiceGroupError?
        do {
            try await ServiceGroup(services).run {
                for await number in signals {
                    if number == SIGHUP {
                        logger.notice("SIGHUP: reloading the configuration")
                        // Waits behind a `reload` call that is running: the reloader applies one reload at a time.
                        _ = await reloader.reload()
                        continue
                    }
                    logger.notice("shutting down", ["SIGNAL": number == SIGTERM ? "SIGTERM" : "SIGINT"])
                    break
                }
            } stopping: { failure in
                guard let failure else { return Systemd.notifyStopping() }
                logger.error("\(failure.message); the daemon stops", ["SERVICE": failure.service])
                Systemd.notifyStopping(status: "Stopping: \(failure.message)")
            }
            ended = nil
        } catch {
            ended = error
        }
        if let ownedPath { unlink(ownedPath) }
        if let path = ofrep?.ownedPath { unlink(path) }
        if let path = varlink?.ownedPath { unlink(path) }
        if let ended { throw ended }
        logger.info("stopped")
    }

    /// The watcher of wall-clock changes (and resumes), which tells the current source and republishes the
    /// status line; nil, with a warning, when the kernel has no `timerfd`.
    private func makeClockWatcher(onChange: @escaping @Sendable () async -> Void) -> ClockChangeWatcher? {
        do {
            return try ClockChangeWatcher(onChange: onChange)
        } catch {
            logger.warning("cannot watch for wall-clock changes; status times may lag until the next refresh: \(error)")
            return nil
        }
    }

    /// The activated socket when systemd passes one; else `SocketPath`, replacing a stale file, never stealing
    /// a live one. Returns the path to unlink at exit, nil for an activated socket that systemd owns.
    private func openSocket(
        _ activated: (sockets: [Int32], rejected: [Int32], ofrep: [Int32], varlink: [Int32])
    ) throws(StartError) -> (
        Int32, String?
    ) {
        for fd in activated.rejected {
            logger.warning(
                "ignored a passed file descriptor that is not a listening Unix stream socket", ["FD": String(fd)])
        }
        if let fd = activated.sockets.first {
            do {
                try UnixSocket.setNonBlocking(fd)
            } catch {
                throw StartError.activatedSocketUnusable(cause: error)
            }
            return (fd, nil)
        }
        let path = configuration.socketPath
        switch UnixSocket.probe(path) {
        case .inUse:
            throw StartError.socketInUse(path: path)
        case .notASocket:
            throw StartError.notASocket(path: path)
        case .stale:
            logger.notice("replacing a stale socket left by an earlier daemon", ["SOCKET": path])
            unlink(path)
        case .absent:
            break
        }
        let directory = PathComponents.directory(of: path)
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        do {
            return (try UnixSocket.listen(at: path, mode: configuration.socketMode), path)
        } catch {
            throw StartError.cannotListen(path: path, cause: error)
        }
    }
}

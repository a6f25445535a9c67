import FlagsCore
import Synchronization

/// Owns the current source stack and applies configuration reloads (SIGHUP and the `reload` method), one at
/// a time.
actor Reloader {
    /// Re-reads the configuration files and the command line as at startup.
    typealias Load = @Sendable () -> Result<Configuration, ConfigurationErrors>

    private let load: Load
    private let environment: [String: String]
    private let store: FlagStore
    private let stateDirectory: StateDirectory
    private let logger: Logger
    private var runner: Task<Void, Never>?
    private var server: SocketServer?
    /// The configuration in effect; the stack keeps the one it was built with (its source keys are the same).
    private(set) var configuration: Configuration

    /// The stack requests go to; swapped by a reload, read without waiting on the actor.
    nonisolated let current: Mutex<SourceStack>

    /// Builds the stack for `configuration`; `prepare()` then serves what it can without the network.
    init(
        configuration: Configuration,
        load: @escaping Load,
        environment: [String: String],
        store: FlagStore,
        stateDirectory: StateDirectory,
        logger: Logger
    ) {
        self.current = Mutex(
            SourceStack(
                configuration: configuration, environment: environment, store: store,
                stateDirectory: stateDirectory, logger: logger))
        self.configuration = configuration
        self.load = load
        self.environment = environment
        self.store = store
        self.stateDirectory = stateDirectory
        self.logger = logger
    }

    /// Serves the local file or the disk cache of the first stack, before the socket opens.
    func prepare() async {
        await current.withLock { $0 }.start()
    }

    /// Starts the first stack's timers.
    func start(server: SocketServer) async {
        self.server = server
        let stack = current.withLock { $0 }
        // An unstructured task because a reload replaces it; `stop()` cancels and awaits it.
        runner = Task { await stack.run() }
    }

    /// Stops the current stack at shutdown.
    func stop() async {
        let stack = current.withLock { $0 }
        await stack.shutdown()
        runner?.cancel()
        await runner?.value
        runner = nil
    }

    /// Re-reads the configuration and applies it; a broken one changes nothing and returns every problem.
    func reload() async -> Result<Void, ConfigurationErrors> {
        Systemd.notifyReloading()
        defer { Systemd.notifyReady(status: current.withLock { $0 }.statusLine(store: store)) }
        let new: Configuration
        switch load() {
        case .success(let loaded): new = loaded
        case .failure(let errors):
            for problem in errors.problems {
                logger.error("reload refused; the running configuration stays: \(problem)")
            }
            return .failure(errors)
        }
        let old = configuration
        logger.level = new.logLevel
        server?.update(limits: ServerLimits(new))
        server?.update(access: AccessPolicy.make(for: new, logger: logger))
        for (key, changed) in [
            ("SocketPath", old.socketPath != new.socketPath), ("SocketMode", old.socketMode != new.socketMode),
            ("StateDirectory", old.stateDirectory != new.stateDirectory),
        ] where changed {
            logger.notice("\(key) changes take effect at the next start")
        }
        if Self.sourceChanged(old, new) {
            await replaceStack(with: new)
        } else {
            await current.withLock { $0 }.refresher.update(configuration: new)
        }
        configuration = new
        logger.notice("configuration reloaded", ["PWFLAGS_EVENT": "reloaded"])
        return .success(())
    }

    /// Builds a stack for the new source; flags of another application or user are discarded first (R7).
    private func replaceStack(with configuration: Configuration) async {
        let old = current.withLock { $0 }
        let oldIdentity = old.identity
        await old.shutdown()
        runner?.cancel()
        await runner?.value
        let stack = SourceStack(
            configuration: configuration, environment: environment, store: store,
            stateDirectory: stateDirectory, logger: logger)
        if stack.identity != oldIdentity {
            logger.notice("the flag source changed; flags of the previous one are discarded (R7)")
            store.replace(with: FlagSet())
        }
        await stack.start()
        current.withLock { $0 = stack }
        runner = Task { await stack.run() }
    }

    /// True when flags come from somewhere else or for someone else after the reload.
    static func sourceChanged(_ old: Configuration, _ new: Configuration) -> Bool {
        old.applicationCode != new.applicationCode || old.serverURL != new.serverURL
            || old.apiTokenFile != new.apiTokenFile || old.hwid != new.hwid || old.userID != new.userID
            || old.deviceType != new.deviceType || old.requestTimeout != new.requestTimeout
            || old.localFlagsFile != new.localFlagsFile
    }
}

import FlagsCore

/// Owns the current source stack and applies configuration reloads (SIGHUP and the `reload` method).
///
/// Reloads run one at a time through a `ReloadQueue`. A reload that changes where flags come from or for whom
/// swaps the stack atomically: control calls wait at the `StackGate`, the old stack is retired (it sends and
/// writes nothing more), and the new one serves what a restart would serve before any call reaches it.
///
/// `run()` runs the current stack's timers as its child task; a swap ends that child (cancels it and waits for
/// it) and starts the new stack's, so no stack's timers outlive it and none is kept in a stored `Task`.
actor Reloader: Service {
    /// A new stack for `run()` to put in place of the running one; `done` resumes once it serves.
    private struct Swap: Sendable {
        let stack: ProviderStack
        let done: CheckedContinuation<Void, Never>
    }

    /// Re-reads the configuration files and the command line as at startup.
    typealias Load = @Sendable () -> Result<Configuration, ConfigurationErrors>

    private let load: Load
    private let environment: [String: String]
    private let store: FlagStore
    private let stateDirectory: StateDirectory
    private let logger: Logger
    /// Handed to every stack, so that the counters outlive reloads.
    private let metrics: DaemonMetrics
    /// Handed to every stack, whose refresher tells it whether the flags are stale.
    private let evaluations: EvaluationTally
    private let queue = ReloadQueue<Result<Void, ConfigurationErrors>>()
    private let swaps = AsyncStream.makeStream(of: Swap.self)
    private var server: SocketServer?
    private var varlink: VarlinkServer?
    /// The policy of every surface's calls, whose `ControlGroups` a reload updates.
    private let policy: CallPolicy?
    /// Set at shutdown: a reload still queued then changes nothing.
    private var stopped = false
    /// The configuration in effect; the stack keeps the one it was built with (its source keys are the same).
    private(set) var configuration: Configuration

    /// The stack requests go to; swapped by a reload.
    nonisolated let stacks: StackGate
    /// Rung after every reload applied, for the metrics file's writer, which waits on it when it has no file.
    nonisolated let reloaded = WakeSignal()
    /// The same for the telemetry's exporter, which resolves its settings again only when it rang: it takes the
    /// signal at each round, and waits on it while telemetry is off (a `WakeSignal` has one waiter).
    nonisolated let reloadedForTelemetry = WakeSignal()

    /// Builds the stack for `configuration`; `prepare()` then serves what it can without the network.
    init(
        configuration: Configuration,
        load: @escaping Load,
        environment: [String: String],
        store: FlagStore,
        stateDirectory: StateDirectory,
        logger: Logger,
        metrics: DaemonMetrics = DaemonMetrics(),
        evaluations: EvaluationTally = EvaluationTally(),
        policy: CallPolicy? = nil
    ) {
        self.policy = policy
        self.stacks = StackGate(
            ProviderStack(
                configuration: configuration, environment: environment, store: store,
                stateDirectory: stateDirectory, logger: logger, metrics: metrics, evaluations: evaluations))
        self.metrics = metrics
        self.evaluations = evaluations
        self.configuration = configuration
        self.load = load
        self.environment = environment
        self.store = store
        self.stateDirectory = stateDirectory
        self.logger = logger
    }

    /// Serves the local file or the disk cache of the first stack, before the socket opens.
    func prepare() async {
        await stacks.current.start()
    }

    /// The server whose limits a reload updates.
    func use(server: SocketServer) {
        self.server = server
    }

    /// The Varlink listener, whose limits a reload updates as the socket's.
    func use(varlink: VarlinkServer) {
        self.varlink = varlink
    }

    /// Runs the current stack's timers and file watch until cancelled, replacing them at every swap.
    func run() async {
        var stack = stacks.current
        let swaps = self.swaps.stream
        while true {
            let running = stack
            // The group ends when both children have: the old stack's run is over before the new one starts.
            let swap = await withTaskGroup(of: Swap?.self) { group in
                group.addTask {
                    await running.run()
                    return nil
                }
                group.addTask {
                    // One iterator at a time: the previous one ended with its group.
                    for await swap in swaps { return swap }
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            // Nil: cancelled (the stack's run only returns then), so the daemon is stopping.
            guard let swap else { return }
            await swap.stack.start()
            stacks.open(with: swap.stack)
            swap.done.resume()
            stack = swap.stack
        }
    }

    /// Graceful shutdown: waits for a reload that is running, then retires the current stack (what is in flight
    /// is cancelled, nothing more is sent or written). Cancelling `run()` then ends its timers.
    func shutdownGracefully() async {
        stopped = true
        // Queued behind a running reload, this finds `stopped` set and does nothing: once it returns, no reload
        // runs and none will.
        _ = await queue.run { await self.apply() }
        await stacks.current.retire()
    }

    /// Re-reads the configuration and applies it; a broken one changes nothing and returns every problem.
    ///
    /// Waits for a reload that is running; callers that arrive together share one reload, which reads the files
    /// after all of them asked.
    func reload() async -> Result<Void, ConfigurationErrors> {
        await queue.run { await self.apply() }
    }

    /// One reload; only ever run by the queue, so never two at once.
    private func apply() async -> Result<Void, ConfigurationErrors> {
        guard !stopped else {
            return .failure(
                ConfigurationErrors([
                    ConfigurationProblem(
                        file: "pwflagsd", line: 0, message: "stopping: the configuration was not reloaded")
                ]))
        }
        Systemd.notifyReloading()
        defer { Systemd.notifyReady(status: stacks.current.statusLine(store: store)) }
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
        varlink?.update(limits: ServerLimits(new))
        policy?.access = AccessPolicy.make(for: new, logger: logger)
        for (key, changed) in [
            ("SocketPath", old.socketPath != new.socketPath), ("SocketMode", old.socketMode != new.socketMode),
            ("StateDirectory", old.stateDirectory != new.stateDirectory),
            ("[DBus]", old.bus != new.bus || old.busName != new.busName),
            ("[Varlink]", old.varlinkSocketPath != new.varlinkSocketPath),
            (
                "[OFREP]",
                OFREPLimits(old) != OFREPLimits(new) || old.ofrepListenAddress != new.ofrepListenAddress
                    || old.ofrepTokenFile != new.ofrepTokenFile
            ),
        ] where changed {
            logger.notice("\(key) changes take effect at the next start")
        }
        if Self.sourceChanged(old, new) {
            await replaceStack(with: new)
        } else {
            // Same source, same session: timers and the request timeout change in place (R18 keeps its ledger).
            await stacks.current.update(configuration: new)
        }
        configuration = new
        reloaded.signal()
        reloadedForTelemetry.signal()
        logger.notice("configuration reloaded", ["PWFLAGS_EVENT": "reloaded"])
        return .success(())
    }

    /// Retires the stack and builds the one for `configuration`, while control calls wait.
    ///
    /// The new stack serves exactly what it would after a restart (the local file, or the disk cache valid for
    /// its application and user, or nothing), in one replacement of the store, so listeners hear only what differs.
    private func replaceStack(with configuration: Configuration) async {
        stacks.close()
        let old = stacks.current
        await old.retire()
        // Built after the old stack is retired: it reads the user id the old one can no longer change.
        let stack = ProviderStack(
            configuration: configuration, environment: environment, store: store,
            stateDirectory: stateDirectory, logger: logger, metrics: metrics, evaluations: evaluations)
        if stack.identity != old.identity {
            logger.notice("the flag source changed; flags of the previous one are no longer served (R7)")
        }
        // `run()` ends the old stack's run, starts this one (it then serves what a restart would), opens the
        // gate and runs its timers.
        await withCheckedContinuation { swaps.continuation.yield(Swap(stack: stack, done: $0)) }
    }

    /// True when flags come from somewhere else or for someone else after the reload.
    ///
    /// `RequestTimeout` is not among them: it changes in place, without a new session or request.
    static func sourceChanged(_ old: Configuration, _ new: Configuration) -> Bool {
        old.applicationCode != new.applicationCode || old.serverURL != new.serverURL
            || old.apiTokenFile != new.apiTokenFile || old.hwid != new.hwid || old.userID != new.userID
            || old.deviceType != new.deviceType || old.localFlagsFile != new.localFlagsFile
            || old.seedFile != new.seedFile
            || old.caFile != new.caFile
    }
}

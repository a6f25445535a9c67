import FlagsCore
public import FoundationEssentials

/// Feature flags for a local Swift program, served by pwflagsd: the API of the Pushwoosh iOS SDK's
/// `Pushwoosh.configure.featureFlags`.
///
/// Reads (`get`, `isEnabled`) answer from an in-process mirror that one `listen` subscription keeps current:
/// they never wait for the daemon or the network (R3), and cost a lock and a dictionary lookup. A background
/// thread, started on the instance's first use (or by `start()`), owns the subscription; it reconnects with capped backoff when the daemon
/// restarts, reconciles the mirror and tells listeners when anything changed meanwhile. While it cannot reach
/// the daemon the mirror keeps its flags, but never past their age (R15).
///
/// Callbacks go to the main queue by default. On Linux the main queue only runs when the program runs
/// `dispatchMain()` or a `RunLoop`; a program that does neither passes a queue of its own.
public final class FeatureFlags: Sendable {
    /// The instance on the default socket: `$PWFLAGS_SOCKET`, else `/run/pwflagsd/pwflagsd.sock`.
    public static let shared = FeatureFlags(
        socketPath: SocketLocation.resolve(environment: ProcessInfo.processInfo.environment))

    /// The daemon's socket.
    public let socketPath: String
    private let mirror: MirrorStore
    private let channel: CommandChannel
    private let subscriber: Subscriber

    /// The mirror; every use of the instance goes through it or `commands`, which start the subscription.
    var store: MirrorStore {
        subscriber.start()
        return mirror
    }

    /// The command connection; reaching it starts the subscription as well.
    var commands: CommandChannel {
        subscriber.start()
        return channel
    }

    /// An instance for the daemon listening on `socketPath`; it starts mirroring on its first use.
    public convenience init(socketPath: String) {
        self.init(socketPath: socketPath, timing: .standard)
    }

    init(socketPath: String, timing: MirrorTiming) {
        self.socketPath = socketPath
        mirror = MirrorStore()
        channel = CommandChannel(socketPath: socketPath)
        subscriber = Subscriber(socketPath: socketPath, store: mirror, timing: timing)
    }

    deinit {
        // Not waiting: deinit may run anywhere, and the thread ends on its own once woken.
        subscriber.stop(waiting: false)
        mirror.finish()
    }

    /// Starts mirroring now, so that the flags may be there by the first read; any other call starts it too.
    public func start() {
        subscriber.start()
    }

    /// Ends the subscription and its thread, finishes the update streams; reads keep the last flags.
    ///
    /// Returns once the thread has ended and the commands already given (impressions included) were sent, so
    /// a program that calls it before exiting loses none.
    public func stop() {
        subscriber.stop(waiting: true)
        mirror.finish()
        channel.queue.sync {}
        channel.close()
    }

    /// The flag for `key`, or nil before the first snapshot and when the daemon has no such flag (R3).
    public func get(_ key: String) -> FeatureFlag? {
        // Not through `store`: the stored reference is read without the retain a computed property returns,
        // which is a measurable share of a 60 ns read.
        subscriber.start()
        return mirror.flag(key).map(FeatureFlag.init)
    }

    /// Whether the flag is enabled, or `defaultValue` when `get(_:)` returns nil (R5).
    public func isEnabled(_ key: String, default defaultValue: Bool) -> Bool {
        subscriber.start()
        return mirror.flag(key)?.flag.isEnabled ?? defaultValue
    }

    /// Every flag of the mirror, sorted by key.
    public var all: [FeatureFlag] {
        store.current.flags.sorted.map(FeatureFlag.init)
    }

    /// True once the first snapshot arrived; before, every read returns nil or the default.
    public var hasSnapshot: Bool {
        store.current.hasSnapshot
    }

    /// True while the subscription to the daemon is open.
    public var isConnected: Bool {
        store.current.isConnected
    }

    /// When the mirror's flags reach their age (the daemon's `status.expiresAt`); nil when they never do.
    public var expiresAt: Date? {
        store.current.expiresAt
    }

    /// Waits for the first snapshot; true when it came, false after `timeout` or when stopped.
    public func waitForFirstSnapshot(timeout: Duration) async -> Bool {
        if hasSnapshot { return true }
        let store = self.store
        return await withDeadline(timeout) { await store.waitForSnapshot() ? true : nil } ?? false
    }
}

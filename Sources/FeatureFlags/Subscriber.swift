import Dispatch
import FlagsCore
import FlagsProtocol
import FoundationEssentials
import Synchronization
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The background thread that keeps the mirror current: one `listen` subscription, re-opened with capped
/// exponential backoff whenever the daemon goes away.
///
/// A plain thread with blocking reads rather than a task: it needs no executor of the host program, and a
/// blocked read costs nothing. `stop()` wakes it by shutting its socket down. `start()` starts it, once; the
/// owner calls it on first use rather than in its `init`.
final class Subscriber: Sendable {
    let socketPath: String
    private let store: MirrorStore
    private let timing: MirrorTiming
    private let control = Locked(Control())
    /// Wakes the backoff wait on `stop()`.
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Set once `start()` has nothing more to do (it started the thread, or `stop()` came first): the reads that
    /// call `start()` then pay one atomic load, not a lock.
    private let settled = Atomic<Bool>(false)

    private struct Control {
        var started = false
        var stopping = false
        /// The socket of the open subscription, for `stop()` to shut down; only set while the connection lives.
        var descriptor: Int32?
    }

    init(socketPath: String, store: MirrorStore, timing: MirrorTiming) {
        self.socketPath = socketPath
        self.store = store
        self.timing = timing
    }

    /// Starts the thread, unless it was started or stopped before.
    func start() {
        guard !settled.load(ordering: .acquiring) else { return }
        let begin = withControl { control in
            defer { control.started = true }
            return !control.started && !control.stopping
        }
        settled.store(true, ordering: .releasing)
        guard begin else { return }
        DetachedThread.start(name: "pwflags-mirror") { [self] in
            run()
            finished.signal()
        }
    }

    /// Asks the thread to end; with `waiting`, returns once it has (at most a few seconds).
    func stop(waiting: Bool) {
        let (first, started) = withControl { control in
            guard !control.stopping else { return (false, control.started) }
            control.stopping = true
            // Under the lock: the thread clears `descriptor` under it before closing the socket, so this
            // never shuts down a descriptor number that was reused meanwhile.
            if let descriptor = control.descriptor { shutdown(descriptor, Int32(SHUT_RDWR)) }
            return (true, control.started)
        }
        settled.store(true, ordering: .releasing)
        guard first, started else { return }
        wake.signal()
        if waiting { _ = finished.wait(timeout: .now() + .seconds(5)) }
    }

    private var isStopping: Bool { withControl { $0.stopping } }

    private func withControl<Result>(_ body: (inout Control) -> Result) -> Result {
        control.withLock { body(&$0) }
    }

    private func run() {
        var backoff = Backoff(initial: timing.initialBackoff, maximum: timing.maximumBackoff)
        while !isStopping {
            if let connection = open() {
                serve(connection, backoff: &backoff)
                withControl { $0.descriptor = nil }
                store.update { mirror in
                    mirror.disconnected()
                    return FlagDiff()
                }
            }
            if isStopping { break }
            var delay = backoff.next()
            // Wake in time to drop flags that reach their age while the daemon is away (R15).
            if let untilExpiry = store.current.timeUntilExpiry(now: timing.now()) {
                delay = min(delay, .milliseconds(Int64(untilExpiry * 1000)))
            }
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(delay / .nanoseconds(1))))
            let now = timing.now()
            store.update { $0.expireIfDue(now: now) }
        }
    }

    /// Connects and registers the socket for `stop()`; nil when the daemon cannot be reached or we stop.
    private func open() -> DaemonConnection? {
        guard let connection = try? DaemonConnection(socketPath: socketPath) else { return nil }
        let registered = withControl { control in
            guard !control.stopping else { return false }
            control.descriptor = connection.fileDescriptor
            return true
        }
        return registered ? connection : nil
    }

    /// Subscribes, reconciles the mirror, then applies notifications until the connection ends.
    ///
    /// The subscription resumes from the epoch and revision the mirror holds: the same daemon that has not
    /// changed since answers "unchanged" and no flag is sent again; a restarted one (a new epoch) sends its
    /// listing, and listeners hear only of the flags that differ from the mirror's.
    private func serve(_ connection: DaemonConnection, backoff: inout Backoff) {
        do {
            let since = store.current.resumePoint
            let listing = try connection.call(.listen(keys: nil, since: since), as: FlagListing.self)
            guard listing.subscription != nil else { return }
            // Only a daemon that stands where the mirror does answers unchanged; anything else cannot be used.
            if listing.unchanged, since == nil || listing.position != since { return }
            let expiresAt = try Self.expiry(listing.expiresAt, else: connection)
            store.update { $0.subscribed(to: listing, expiresAt: expiresAt) }
            backoff.reset()
            var nextStatus = ContinuousClock.now + timing.statusInterval
            while !isStopping {
                let wait = max(ContinuousClock.now.duration(to: nextStatus), .zero)
                if let (method, params) = try connection.nextNotification(timeout: wait) {
                    guard method == FlagsChanged.method, let change = FlagsChanged(params: params) else { continue }
                    // The notification carries the flags' age: the mirror shows the flags and their age together.
                    let expiresAt = try Self.expiry(change.expiresAt, else: connection)
                    store.update { mirror in
                        let diff = mirror.apply(change)
                        mirror.setExpiry(expiresAt)
                        return diff
                    }
                    if change.expiresAt == nil {
                        // A daemon that does not send expiresAt notifies before it records the fetch time that
                        // `status` reports: read it once more when that has surely happened.
                        nextStatus = ContinuousClock.now + min(timing.settleDelay, timing.statusInterval)
                    }
                    continue
                }
                let expiresAt = try Self.readExpiry(connection)
                store.update { mirror in
                    mirror.setExpiry(expiresAt)
                    return FlagDiff()
                }
                nextStatus = ContinuousClock.now + timing.statusInterval
            }
        } catch {
            // The connection is gone or unusable; run() reconnects.
        }
    }

    /// The `expiresAt` a `listen` reply or a `flagsChanged` carried; from a `status` call only when it carried
    /// none (a daemon older than that member).
    static func expiry(_ carried: JSONValue?, else connection: DaemonConnection) throws(ClientError) -> Date? {
        if let carried { return expiry(value: carried) }
        return try readExpiry(connection)
    }

    /// `status.expiresAt`: nil for null (never expires) or a daemon that does not report it.
    static func readExpiry(_ connection: DaemonConnection) throws(ClientError) -> Date? {
        expiry(inStatus: try connection.call(.status, as: StatusResult.self))
    }

    /// The `expiresAt` of a `status` result.
    static func expiry(inStatus status: StatusResult) -> Date? {
        status.expiresAt.flatMap { try? Date.ISO8601FormatStyle().parse($0) }
    }

    /// An `expiresAt` value: nil for null (never expires) or anything that is not an ISO 8601 timestamp.
    static func expiry(value: JSONValue) -> Date? {
        guard let text = value.stringValue else { return nil }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}

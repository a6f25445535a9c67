import FlagsCore
import OFREP
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// OFREP over HTTP on the event engine, apart from the line protocol's: its parsing, answers, CORS, and event
/// streams (OFREPHandler+Streams); one connection's steps are in OFREPHandler+Connections.
///
/// Every answer is computed on the event loop's thread from the latest snapshot the store pushed (`ChangeFeed`; no
/// request waits on anything), so a connection is a parser, an output queue and a deadline. Other threads only
/// ask it to stop, or push a change, through the engine's doorbell. Bounded: `maxConnections` (more get 503 and
/// are closed), the parser's head and body limits, the idle deadline (a slow or silent client is closed, 408
/// if it was mid-request), and `maxPendingBytes` of answers per connection (past it the connection's next
/// requests wait unread until the client reads).
///
/// `@unchecked Sendable`: other threads call only `stop()`, which touches the `Locked` and the doorbell.
final class OFREPHandler: ConnectionHandler, @unchecked Sendable {
    let stopRequested = Locked(false)
    private let doorbell: Doorbell
    /// The flags' changes, each pushed here by the store, as to the line protocol's handler.
    private let feed: ChangeFeed
    let isTCP: Bool
    let responder: OFREPResponder
    let limits: OFREPLimits
    let logger: Logger
    /// Where TCP clients reach the listener (`http://127.0.0.1:8016`), for the stream URL; nil on a Unix socket.
    let streamOrigin: String?
    let metrics: DaemonMetrics
    /// Single evaluations answered, for the telemetry's records.
    let evaluations: EvaluationTally

    // Loop thread only.
    unowned(unsafe) var engine: EventEngine<OFREPHandler>!
    var limiter: OFREPRateLimiter
    var flags: OFREPFlagsCache
    var streams: OFREPEventStreams
    var streamCount = 0
    static let surface = "ofrep"
    var listenCount: Int { streamCount }
    /// Wrong tokens, answered at a bounded rate for all clients together.
    var refusals = DelayedRefusals()
    /// The bulk answer with its `eventStreams`, for the flags tag and channel it was built from.
    var advertised: (source: EntityTag, channel: String, flags: OFREPFlags)?

    /// The earliest deadline of a connection, as `nextDeadline` last found it.
    var earliestConnectionDeadline: UInt64 = 0

    /// The longest the loop flushes answers at shutdown.
    static let drainTimeout: UInt64 = 1_000_000_000

    init(
        doorbell: Doorbell, listenFD: Int32, isTCP: Bool, store: FlagStore, token: [UInt8]?,
        allowedOrigins: [String], limits: OFREPLimits, logger: Logger, metrics: DaemonMetrics,
        evaluations: EvaluationTally
    ) {
        self.doorbell = doorbell
        self.isTCP = isTCP
        self.responder = OFREPResponder(token: isTCP ? token : nil, allowedOrigins: Set(allowedOrigins))
        self.limits = limits
        self.limiter = OFREPRateLimiter(perSecond: limits.requestRate)
        let feed = ChangeFeed(store: store, doorbell: doorbell)
        self.feed = feed
        self.flags = OFREPFlagsCache(snapshot: feed.initial, maximumBulkBytes: limits.maxBulkBytes, logger: logger)
        self.logger = logger
        self.metrics = metrics
        self.evaluations = evaluations
        if isTCP, let host = InetSocket.localHost(listenFD), let port = InetSocket.localPort(listenFD) {
            streamOrigin = "http://" + (host.contains(":") ? "[\(host)]" : host) + ":" + String(port)
        } else {
            streamOrigin = nil
        }
        streams = OFREPEventStreams(etag: "", wallSeconds: Self.wallSeconds())
        _ = advertisedFlags(now: EngineClock.now())
    }

    /// Asks the loop to stop, from any thread.
    func stop() {
        stopRequested.withLock { $0 = true }
        doorbell.ring()
    }

    var maxConnections: Int { limits.maxConnections }

    /// A stop, or changes of the flags: the latest snapshot is served, and announced to the streams.
    func woke() {
        let changes = feed.take()
        if let latest = changes.last {
            flags.serve(latest.update.snapshot)
            _ = advertisedFlags(now: EngineClock.now())
        }
        if stopRequested.withLock({ $0 }) { engine.beginDraining(timeout: Self.drainTimeout) }
    }

    func tick(now: UInt64) {
        // The advertised channel's replacement changes the bulk answer too; flags' changes come through `woke`.
        if streamCount > 0, let rotation = streams.nextRotation, now >= rotation { _ = advertisedFlags(now: now) }
        releaseRefusals(now: now)
        let released = flags.takeReleased()
        if released > 0 { engine.loop.memoryReturn.released(released) }
        // Every doorbell of the loop ticks this handler: the connections are walked only when one is due (the
        // earliest deadline as `nextDeadline` last found it; any deadline set since lies further ahead).
        guard now >= earliestConnectionDeadline else { return }
        for connection in Array(engine.connections.values) where now >= connection.deadline {
            if connection.isStream {
                beat(connection, now: now)
            } else {
                expire(connection)
            }
        }
    }

    /// At shutdown: what is answered is sent (until the drain's deadline), nothing more is read.
    func drainStarted() {
        for connection in Array(engine.connections.values) {
            if connection.pendingCount == 0 {
                engine.close(connection)
            } else {
                connection.closesAfterFlush = true
                engine.setInterest(connection, .output)
            }
        }
    }

    func stopped() {
        feed.close()
    }

    static func wallSeconds() -> Int { time(nil) }
}

import UnixIO

/// A connection as the engine sees it: a socket, its unsent output, and the epoll events it is registered for.
protocol EngineConnection: AnyObject {
    var fd: Int32 { get }
    var output: OutputQueue { get set }
    /// The epoll events currently registered (empty: not yet registered).
    var interest: Epoll.Events { get set }
    /// The peer's user id (`SO_PEERCRED`), for its share of the connections; nil when unknown (TCP).
    var peerUID: UInt32? { get }
}

/// A protocol served by an `EventEngine`: what a connection is, and what its events mean.
///
/// The engine owns the socket work every protocol shares (accepting within the limit, the pause when
/// descriptors run out, refusal logs, sending the output queue, epoll interest, deadlines, the drain); the
/// handler reads and answers. Every method runs on the event loop's thread.
protocol ConnectionHandler: AnyObject {
    associatedtype Connection: EngineConnection

    /// The engine serving this handler; set once the engine is built. The engine owns the handler, so the
    /// handler holds it unowned.
    var engine: EventEngine<Self>! { get set }

    /// How many connections may be open at once.
    var maxConnections: Int { get }

    /// The surface's name in the metrics (`line`, `varlink`, `ofrep`).
    static var surface: String { get }
    /// The listens open now (subscriptions, `Listen`s, event streams).
    var listenCount: Int { get }

    /// Makes a connection of an admitted socket (non-blocking, close-on-exec), the engine's `id`-th; nil closes
    /// it.
    func open(_ fd: Int32, id: UInt64) -> Connection?

    /// The engine is full and a client waits: a chance to close connections that need not keep their slot.
    func makeRoom()

    /// A client past `maxConnections`, closed after this; `logCount` is the number of refusals a log line due
    /// now stands for (nil: none is due).
    func refuse(_ fd: Int32, logCount: Int?)

    /// The engine's doorbell rang (another thread has something for the loop).
    func woke()

    /// `events` happened on `connection`.
    func handle(_ events: Epoll.Events, on connection: Connection)

    /// Writes what it can, adjusts the epoll interest, and closes the connection when it is done.
    func settle(_ connection: Connection)

    /// `connection` is about to close: forget what refers to it.
    func closing(_ connection: Connection)

    /// The next time `tick` has something to do (monotonic nanoseconds), nil for none.
    func nextDeadline() -> UInt64?

    /// Runs after every wait in which the engine had something to do, for deadlines; `now` is the loop's clock
    /// reading for the round.
    func tick(now: UInt64)

    /// The engine stopped accepting and drains: answer what was received, stop reading.
    func drainStarted()

    /// The loop ended and every connection is closed.
    func stopped()
}

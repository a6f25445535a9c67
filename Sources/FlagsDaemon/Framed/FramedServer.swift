import FlagsProtocol
import UnixIO

/// A call a framed protocol hands off the loop because it may wait; its answer goes back to the loop.
protocol OffLoopCall: Sendable {
    var perform: @Sendable () async -> Result<any CallResult, RPCError> { get }
}

/// The messages a framed protocol's handler takes from other threads, the ones its server sends included.
protocol ServerMail: Sendable {
    associatedtype Call: OffLoopCall
    /// A call carried out off the loop, with its answer.
    static func completion(_ call: Call, result: Result<any CallResult, RPCError>) -> Self
    /// New `[Daemon]` limits (a reload).
    static func limits(_ limits: ServerLimits) -> Self
    /// Stop accepting, answer what was received, flush, end.
    static var shutdown: Self { get }
}

/// What a framed protocol's server needs of its handler beyond the framed steps: how it is made, and its mail.
protocol ServedHandler: FramedHandler, Sendable {
    associatedtype Mail: ServerMail

    init(
        doorbell: Doorbell, store: FlagStore, controller: FlagService, limits: ServerLimits, logger: Logger,
        submit: @escaping @Sendable (Mail.Call) -> Void)

    /// Hands a message to the loop from any thread.
    func post(_ message: Mail)

    /// What the log calls the server when it ends unexpectedly.
    static var serverName: String { get }
}

/// A framed protocol's listener as a service (the line socket, Varlink): its handler on the daemon's event loop,
/// and each call that may wait carried out off the loop, in a task that ends with the call.
final class FramedServer<Handler: ServedHandler>: Service {
    let engine: EventEngine<Handler>
    private let calls: LoopService<Handler.Mail.Call>

    /// Serves `listenFD`, a listening Unix stream socket the server now owns and closes at the end.
    init(
        listenFD: Int32, store: FlagStore, controller: FlagService, limits: ServerLimits, logger: Logger,
        heartbeat: EventEngine<Handler>.Heartbeat? = nil
    ) throws(SystemError) {
        let calls = LoopService<Handler.Mail.Call>()
        self.calls = calls
        engine = try EventEngine(
            listenFD: listenFD, share: ConnectionShare(), logger: logger, logPrefix: Handler.logPrefix,
            heartbeat: heartbeat
        ) { doorbell in
            Handler(
                doorbell: doorbell, store: store, controller: controller, limits: limits, logger: logger,
                submit: calls.submit)
        }
    }

    /// Serves until shut down or cancelled: then stops accepting, answers the messages already received,
    /// flushes, and returns.
    func run() async {
        let engine = self.engine
        let loop = engine.handler
        await calls.run(
            start: { engine.start(finished: $0) },
            perform: { call in loop.post(.completion(call, result: await call.perform())) },
            stop: { loop.post(.shutdown) })
    }

    /// Begins a graceful shutdown; `run()` returns when it is done.
    func shutdown() {
        engine.handler.post(.shutdown)
    }

    func shutdownGracefully() async {
        shutdown()
    }

    var returnsAfterGracefulShutdown: Bool { true }

    /// Applies new limits (a reload); connections already open keep their message limit.
    func update(limits: ServerLimits) {
        engine.handler.post(.limits(limits))
    }

    var name: String { Handler.serverName }
}

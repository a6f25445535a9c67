import FlagsProtocol
import UnixIO

/// A framed protocol's listener as a service (the line socket, Varlink): its handler on the daemon's event loop,
/// and each call that may wait carried out off the loop, in a task that ends with the call.
final class FramedServer<Handler: ServedHandler>: Service {
    let engine: EventEngine<Handler>
    private let calls: LoopService<Handler.Call>

    /// Serves `listenFD`, a listening Unix stream socket the server now owns and closes at the end.
    init(
        listenFD: Int32, store: FlagStore, controller: FlagService, limits: ServerLimits, logger: Logger,
        heartbeat: EventEngine<Handler>.Heartbeat? = nil
    ) throws(SystemError) {
        let calls = LoopService<Handler.Call>()
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

import FlagsProtocol
import FoundationEssentials
import UnixIO

/// The local socket server (docs/protocol.md): its listener on the daemon's event loop, and a task group for
/// requests that may wait.
final class SocketServer: Service {
    private let engine: EventEngine<LineHandler>
    private let calls: LoopService<RequestRouter.Work>

    /// Serves `listenFD`, a listening Unix stream socket the server now owns and closes at the end.
    init(
        listenFD: Int32,
        store: FlagStore,
        handler: FlagService,
        limits: ServerLimits,
        logger: Logger,
        heartbeat: (interval: Duration, action: @Sendable () -> Void)? = nil
    ) throws(SystemError) {
        let calls = LoopService<RequestRouter.Work>()
        self.calls = calls
        self.engine = try EventEngine(
            listenFD: listenFD, logger: logger,
            heartbeat: heartbeat.map { .init(interval: $0.interval, action: $0.action) }
        ) { doorbell in
            LineHandler(
                doorbell: doorbell, store: store, controller: handler, limits: limits, logger: logger,
                submit: calls.submit)
        }
    }

    /// Serves until `shutdown()`: then stops accepting, answers the lines already received, flushes, and returns.
    func run() async {
        let engine = self.engine
        let loop = engine.handler
        await calls.run(
            start: { engine.start(finished: $0) },
            perform: { item in
                let result = await item.perform()
                loop.post(.completion(connection: item.connection, requestID: item.requestID, result: result))
            },
            stop: { loop.post(.shutdown) })
    }

    /// Begins a graceful shutdown; `run()` returns when it is done.
    func shutdown() {
        engine.handler.post(.shutdown)
    }

    /// Applies new limits (a reload); connections already open keep their line limit.
    func update(limits: ServerLimits) {
        engine.handler.post(.limits(limits))
    }

    /// The `metrics` text, rendered on the loop's thread where its counters live.
    func metricsText(format: MetricsFormat) async -> String {
        await withCheckedContinuation { done in
            engine.handler.post(.metrics(format, reply: { done.resume(returning: $0) }))
        }
    }
}

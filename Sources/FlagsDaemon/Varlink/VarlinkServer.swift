import FlagsCore
import UnixIO

/// The Varlink listener (docs/varlink.md) as a service: its listener on the daemon's event loop, and the task
/// group that carries out the calls that may wait.
///
/// Each call's child task ends with the call: a discarding task group keeps nothing of a finished child, so the
/// daemon holds no memory per call made (a task group of results kept every one until the daemon ended).
final class VarlinkServer: Service {
    private let engine: EventEngine<VarlinkHandler>
    private let calls: LoopService<VarlinkRouter.Work>

    /// Serves `listenFD`, a listening Unix stream socket the server now owns and closes at the end.
    init(
        listenFD: Int32, store: FlagStore, controller: FlagService, limits: ServerLimits, logger: Logger
    ) throws(SystemError) {
        let calls = LoopService<VarlinkRouter.Work>()
        self.calls = calls
        engine = try EventEngine(listenFD: listenFD, logger: logger, logPrefix: "Varlink: ") { doorbell in
            VarlinkHandler(
                doorbell: doorbell, store: store, controller: controller, limits: limits, logger: logger,
                submit: calls.submit)
        }
    }

    /// Serves until shut down or cancelled: then stops accepting, answers the calls already received, flushes,
    /// and returns.
    func run() async {
        let engine = self.engine
        let loop = engine.handler
        await calls.run(
            start: { engine.start(finished: $0) },
            perform: { item in loop.post(.completion(item, result: await item.perform())) },
            stop: { loop.post(.shutdown) })
    }

    func shutdownGracefully() async {
        engine.handler.post(.shutdown)
    }

    var returnsAfterGracefulShutdown: Bool { true }

    /// Applies new limits (a reload); connections already open keep their message limit.
    func update(limits: ServerLimits) {
        engine.handler.post(.limits(limits))
    }
}

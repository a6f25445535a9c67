import FlagsCore
import FoundationEssentials
import UnixIO

/// The OFREP listener (docs/openfeature.md) as a service: its listener on the daemon's event loop.
final class OFREPServer: Service {
    private let engine: EventEngine<OFREPHandler>

    /// Serves `listenFD`, a listening stream socket the server now owns and closes at the end. `token` is asked
    /// of TCP clients only (`isTCP`); Unix socket clients are vetted by the socket file's permissions.
    /// `allowedOrigins` are the web origins whose pages may read the answers (CORS). Each answer is counted in
    /// `metrics`.
    init(
        listenFD: Int32, isTCP: Bool, store: FlagStore, token: [UInt8]?, allowedOrigins: [String] = [],
        limits: OFREPLimits, logger: Logger, metrics: DaemonMetrics, evaluations: EvaluationTally
    ) throws(SystemError) {
        engine = try EventEngine(listenFD: listenFD, share: ConnectionShare(), logger: logger, logPrefix: "OFREP: ") {
            doorbell in
            OFREPHandler(
                doorbell: doorbell, listenFD: listenFD, isTCP: isTCP, store: store, token: token,
                allowedOrigins: allowedOrigins, limits: limits, logger: logger, metrics: metrics,
                evaluations: evaluations)
        }
    }

    /// Serves until shut down or cancelled.
    func run() async {
        let engine = self.engine
        await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                engine.start { done.resume() }
            }
        } onCancel: {
            engine.handler.stop()
        }
    }

    /// Stops accepting; `run()` sends what is queued (briefly), closes and returns.
    func shutdownGracefully() async {
        engine.handler.stop()
    }

    var returnsAfterGracefulShutdown: Bool { true }
}

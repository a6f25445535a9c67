import FlagsProtocol

/// The local socket server (docs/protocol.md): the line protocol's handler on the daemon's event loop, and a task
/// for each request that may wait.
typealias SocketServer = FramedServer<LineHandler>

extension FramedServer where Handler == LineHandler {
    /// The `metrics` text, rendered on the loop's thread where its counters live.
    func metricsText(format: MetricsFormat) async -> String {
        await withCheckedContinuation { done in
            engine.handler.post(.own(.metrics(format, reply: { done.resume(returning: $0) })))
        }
    }
}

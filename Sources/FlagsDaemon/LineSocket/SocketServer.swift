import FlagsProtocol

/// The local socket server (docs/protocol.md): the line protocol's handler on the daemon's event loop, and a task
/// for each request that may wait.
typealias SocketServer = FramedServer<LineHandler>

extension FramedServer where Handler == LineHandler {
    /// The `metrics` text, of families gathered on the loop's thread where its counters live.
    func metricsText(format: MetricsFormat) async -> String {
        MetricsExposition.text(await metricFamilies(), format: format)
    }

    /// The `metrics` families, gathered on the loop's thread.
    func metricFamilies() async -> [MetricFamily] {
        await withCheckedContinuation { done in
            engine.handler.post(.own(.metrics(reply: { done.resume(returning: $0) })))
        }
    }
}

/// Times each change of the flag set from the moment the store made it until the last notification about it is
/// written, for the propagation histogram.
///
/// A notification that a client's socket did not take at once waits in the connection's output; the change
/// counts as propagated when every connection it was queued on has written all its output (or closed). Owned by
/// the event loop's thread.
final class PropagationTracker {
    private struct Wait {
        let madeAt: UInt64
        var connections: Set<UInt64>
    }

    private let metrics: ServerMetrics
    private var waits: [Wait] = []

    /// Changes still waiting for a slow reader, at most: past it the oldest is counted as it stands, so that a
    /// client that never reads (yet stays under `MaxPendingBytes`) cannot grow this without bound.
    static let maximumWaits = 64

    init(metrics: ServerMetrics) {
        self.metrics = metrics
    }

    /// True when no change waits for a connection's output: the loop then skips `written(_:now:)`.
    var isIdle: Bool { waits.isEmpty }

    /// A change made at `madeAt` was queued; `unsent` are the connections that still hold part of it.
    func queued(madeAt: UInt64, unsent: Set<UInt64>, now: UInt64) {
        guard !unsent.isEmpty else {
            record(madeAt, now)
            return
        }
        waits.append(Wait(madeAt: madeAt, connections: unsent))
        if waits.count > Self.maximumWaits { record(waits.removeFirst().madeAt, now) }
    }

    /// `connection` has written all its output, or closed.
    func written(_ connection: UInt64, now: UInt64) {
        var index = 0
        while index < waits.count {
            waits[index].connections.remove(connection)
            if waits[index].connections.isEmpty {
                record(waits.remove(at: index).madeAt, now)
            } else {
                index += 1
            }
        }
    }

    private func record(_ madeAt: UInt64, _ now: UInt64) {
        metrics.propagated(after: Double(now > madeAt ? now - madeAt : 0) / 1e9)
    }
}

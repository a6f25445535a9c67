import UnixIO

/// The counters kept off the socket loop: refreshes by trigger and outcome, impressions by outcome, OFREP
/// requests by endpoint and status.
///
/// One per daemon, kept across reloads (a reload builds a new refresher, and counters must not go back to
/// zero with it); written by the refresher and the controller, read by `metrics`.
final class DaemonMetrics: Sendable {
    /// A refresh's labels: what started it, how it ended, and its R11 status (200 for a reply that was used).
    struct Refresh: Hashable, Sendable {
        var trigger: String
        var outcome: String
        var status: Int
    }

    /// An OFREP request's labels: the endpoint it asked for (`single`, `bulk`, or `other` for a path outside
    /// OFREP and a request too malformed to have one) and the HTTP status of its answer.
    struct OFREPRequest: Hashable, Sendable {
        var endpoint: String
        var status: Int
    }

    struct Counts: Sendable, Equatable {
        var refreshes: [Refresh: Int] = [:]
        var impressions: [String: Int] = [:]
        /// Failed requests to Pushwoosh by ``PushwooshError/Kind``.
        var refreshFailures: [String: Int] = [:]
        var ofrepRequests: [OFREPRequest: Int] = [:]
        /// OTLP exports by signal (`metrics`, `logs`) and outcome (`sent`, `failed`, `refused`).
        var telemetryExports: [TelemetryExport: Int] = [:]
    }

    /// An OTLP export's labels.
    struct TelemetryExport: Hashable, Sendable {
        var signal: String
        var outcome: String
    }

    private let counts = Locked(Counts())

    init() {}

    /// Counts one request to the flag source that ended.
    func refreshed(trigger: String, outcome: String, status: Int) {
        counts.withLock { $0.refreshes[Refresh(trigger: trigger, outcome: outcome, status: status), default: 0] += 1 }
    }

    /// Counts one failed request to Pushwoosh by why it failed.
    func refreshFailed(kind: String) {
        counts.withLock { $0.refreshFailures[kind, default: 0] += 1 }
    }

    /// Counts one `logImpression` answer by its outcome.
    func impression(_ outcome: String) {
        counts.withLock { $0.impressions[outcome, default: 0] += 1 }
    }

    /// Counts one answered OFREP request.
    func ofrepAnswered(endpoint: String, status: Int) {
        counts.withLock { $0.ofrepRequests[OFREPRequest(endpoint: endpoint, status: status), default: 0] += 1 }
    }

    /// Counts one OTLP export that ended.
    func telemetryExport(signal: String, outcome: String) {
        counts.withLock {
            $0.telemetryExports[TelemetryExport(signal: signal, outcome: outcome), default: 0] += 1
        }
    }

    /// The counts now.
    var current: Counts { counts.withLock { $0 } }
}

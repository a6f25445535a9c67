import FlagsCore
import FlagsProtocol

/// The socket server's counters: requests by method, errors by code, and how long a change takes to reach its
/// subscribers.
///
/// Owned by the event loop's thread, like the connections: plain integers, no lock, so that counting a `get`
/// costs one add.
final class ServerMetrics {
    /// Requests the fast scanner answered (`get`, `isEnabled`, `getAll`), counted apart so that the hot path
    /// touches no dictionary.
    var fastGets = 0
    var fastIsEnabled = 0
    var fastGetAll = 0
    /// Requests by method, for the lines the general decoder typed.
    private(set) var requests: [String: Int] = [:]
    /// Error responses written, by JSON-RPC code (a request without id gets none, and counts none).
    private(set) var errors: [Int: Int] = [:]
    /// The time from a change of the flag set to the last notification about it written, as a histogram.
    private(set) var propagation = Histogram(bounds: ServerMetrics.propagationBounds)

    /// Seconds: from a tenth of a millisecond (an idle loop) to seconds (a loop behind thousands of subscribers).
    static let propagationBounds: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
    ]

    /// Counts a typed request.
    func request(_ call: Call) {
        requests[call.method, default: 0] += 1
    }

    /// Counts an error response.
    func error(_ error: RPCError) {
        errors[error.code, default: 0] += 1
    }

    /// Records a change that reached its last subscriber `seconds` after it was made.
    func propagated(after seconds: Double) {
        propagation.observe(seconds)
    }

    /// Requests by method, the fast scanner's included.
    var requestsByMethod: [String: Int] {
        var all = requests
        all["get", default: 0] += fastGets
        all["isEnabled", default: 0] += fastIsEnabled
        all["getAll", default: 0] += fastGetAll
        return all.filter { $0.value > 0 }
    }
}

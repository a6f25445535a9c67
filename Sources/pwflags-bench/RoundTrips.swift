import PWFlagsTestKit
import UnixIO

/// Timing of sequential round trips on one connection, for the sections that compare two ways of asking the same
/// daemon (a Varlink or D-Bus `Get` against a line `get`).
enum RoundTrips {
    /// The mean nanoseconds of `rounds` round trips of `ask`, each waiting for its answer.
    static func mean(_ rounds: Int, _ ask: () throws -> Void) rethrows -> Double {
        let start = MonotonicClock.nanoseconds()
        for _ in 0..<rounds { try ask() }
        return Double(MonotonicClock.nanoseconds() - start) / Double(rounds)
    }

    /// One line `get` of `key` on `client`: the request, and its answer read back unparsed.
    static func lineGet(_ key: String, on client: RawClient) -> () throws -> Void {
        let request = Array(#"{"id":1,"method":"get","params":{"key":"\#(key)"}}"#.utf8) + [0x0A]
        return {
            try client.send(request)
            guard client.readLine() != nil else { throw SystemError("read", errno: 0) }
        }
    }
}

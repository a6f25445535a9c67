import CSystemd
import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A bus member's hang-up flood: connect, send a few ordinary reads (`IsEnabled`), hang up without waiting for
/// the answers, and again, from several threads at once, for as long as asked. Each connection is a new sender
/// the daemon has never met, so each costs it a lookup of who sent the calls.
public enum BusHangUpFlood {
    public struct Tally: Sendable, CustomStringConvertible {
        public var connections = 0
        public var calls = 0
        /// Connections the bus refused (its own limits on a user's connections).
        public var refused = 0

        public var description: String { "connections \(connections) calls \(calls) refused \(refused)" }

        /// Reads a tally back from its `description`.
        public init?(printed: String) {
            let words = printed.split(whereSeparator: \.isWhitespace).map(String.init)
            guard words.count == 6, let connections = Int(words[1]), let calls = Int(words[3]),
                let refused = Int(words[5])
            else { return nil }
            self.connections = connections
            self.calls = calls
            self.refused = refused
        }

        init() {}
    }

    /// Floods the bus at `address` for `seconds` from `workers` threads, `calls` reads a connection.
    public static func run(address: String, seconds: Double, calls: Int = 8, workers: Int = 4) -> Tally {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let tallies = Locked<[Tally]>([])
        let threads = (0..<workers).map { _ in
            Thread {
                var tally = Tally()
                while ContinuousClock.now < deadline {
                    if connectCallAndHangUp(address: address, calls: calls) {
                        tally.connections += 1
                        tally.calls += calls
                    } else {
                        tally.refused += 1
                        usleep(1_000)
                    }
                }
                tallies.withLock { $0.append(tally) }
            }
        }
        for thread in threads { thread.start() }
        while tallies.withLock({ $0.count }) < workers { usleep(10_000) }
        return tallies.withLock { all in
            all.reduce(into: Tally()) { total, one in
                total.connections += one.connections
                total.calls += one.calls
                total.refused += one.refused
            }
        }
    }

    /// One connection: `calls` reads written to the bus, then closed; false when the bus did not take them.
    private static func connectCallAndHangUp(address: String, calls: Int) -> Bool {
        var bus: OpaquePointer?
        guard sd_bus_new(&bus) >= 0, let bus else { return false }
        defer { sd_bus_close_unref(bus) }
        sd_bus_set_address(bus, address)
        sd_bus_set_bus_client(bus, 1)
        guard sd_bus_start(bus) >= 0 else { return false }
        for _ in 0..<calls {
            var message: OpaquePointer?
            guard
                sd_bus_message_new_method_call(
                    bus, &message, BusCaller.destination, BusCaller.path, BusCaller.destination, "IsEnabled") >= 0,
                let message
            else { return false }
            defer { sd_bus_message_unref(message) }
            _ = "new_checkout".withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
            var fallback: Int32 = 0
            _ = sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &fallback)
            guard sd_bus_send(bus, message, nil) >= 0 else { return false }
        }
        // Waits for the bus's hello and writes the calls; the answers are never read.
        return sd_bus_flush(bus) >= 0
    }
}

/// Another member's view during a flood: an `IsEnabled` every `interval` on one connection, each timed.
public enum BusProbe {
    public struct Result: Sendable, CustomStringConvertible {
        /// Each call's time, in milliseconds, in order.
        public var milliseconds: [Double] = []
        public var failures = 0
        /// The slowest of the bus's own answers (`GetId`), one made before each call to the daemon: how slow the
        /// bus itself was.
        public var busWorst = 0.0

        public var worst: Double { milliseconds.max() ?? .nan }

        public var description: String {
            let sorted = milliseconds.sorted()
            let p50 = sorted.isEmpty ? Double.nan : sorted[sorted.count / 2]
            let p99 = sorted.isEmpty ? Double.nan : sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
            return "calls \(milliseconds.count) failed \(failures) p50_ms \(Self.format(p50)) "
                + "p99_ms \(Self.format(p99)) max_ms \(Self.format(worst)) bus_max_ms \(Self.format(busWorst))"
        }

        private static func format(_ value: Double) -> String {
            value.isNaN ? "nan" : String(Int((value * 1000).rounded())) + "e-3"
        }

        /// Reads a result's summary back (`calls`, `failed`, `p50_ms` and `max_ms`); nil when it is not one.
        public static func summary(
            printed: String
        ) -> (calls: Int, failures: Int, medianMilliseconds: Double, worstMilliseconds: Double)? {
            let words = printed.split(whereSeparator: \.isWhitespace).map(String.init)
            guard let calls = words.firstIndex(of: "calls").flatMap({ Int(words[$0 + 1]) }),
                let failures = words.firstIndex(of: "failed").flatMap({ Int(words[$0 + 1]) }),
                let median = words.firstIndex(of: "p50_ms").flatMap({ parse(words[$0 + 1]) }),
                let worst = words.firstIndex(of: "max_ms").flatMap({ parse(words[$0 + 1]) })
            else { return nil }
            return (calls, failures, median, worst)
        }

        private static func parse(_ text: String) -> Double? {
            guard text.hasSuffix("e-3"), let thousandths = Int(text.dropLast(3)) else { return nil }
            return Double(thousandths) / 1000
        }
    }

    /// Probes the daemon on the bus at `address` for `seconds`.
    public static func run(address: String, seconds: Double, interval: Duration = .milliseconds(20)) throws -> Result {
        let caller = try BusCaller(address: address)
        let call = FloodCall.bus("IsEnabled", "sb", ["new_checkout", "false"])
        var result = Result()
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            let beforeBus = ContinuousClock.now
            do {
                if try caller.callTheBus() != nil { result.failures += 1 }
            } catch {
                result.failures += 1
            }
            result.busWorst = max(result.busWorst, milliseconds(ContinuousClock.now - beforeBus))
            let start = ContinuousClock.now
            do {
                let tally = try caller.flood(call, count: 1)
                if tally.errors > 0 { result.failures += 1 }
            } catch {
                result.failures += 1
            }
            let elapsed = ContinuousClock.now - start
            result.milliseconds.append(milliseconds(elapsed))
            if elapsed < interval { usleep(UInt32(milliseconds(interval - elapsed) * 1000)) }
        }
        return result
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }
}

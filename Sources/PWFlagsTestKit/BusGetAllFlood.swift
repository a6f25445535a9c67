import CSystemd
import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A bus member that keeps several `GetAll` calls in flight on one connection for as long as asked: as soon as
/// one is answered, it asks again. On a large flag set every answer is megabytes the daemon writes.
public enum BusGetAllFlood {
    public struct Tally: Sendable, CustomStringConvertible {
        public var replies = 0
        public var errors = 0

        public var description: String { "replies \(replies) errors \(errors)" }

        /// Reads a tally back from its `description`.
        public init?(printed: String) {
            let words = printed.split(whereSeparator: \.isWhitespace).map(String.init)
            guard words.count == 4, let replies = Int(words[1]), let errors = Int(words[3]) else { return nil }
            self.replies = replies
            self.errors = errors
        }

        init() {}
    }

    /// Floods the daemon on the bus at `address` for `seconds` with `inFlight` calls outstanding at a time.
    public static func run(address: String, seconds: Double, inFlight: Int = 8) throws -> Tally {
        let caller = try BusCaller(address: address)
        let bus = caller.bus
        let state = FloodState()
        let userdata = Unmanaged.passUnretained(state).toOpaque()
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            while state.outstanding < inFlight {
                var message: OpaquePointer?
                guard
                    sd_bus_message_new_method_call(
                        bus, &message, BusCaller.destination, BusCaller.path, BusCaller.destination, "GetAll") >= 0,
                    let message
                else { throw CallFlood.Failure.bus("cannot make a GetAll call") }
                defer { sd_bus_message_unref(message) }
                let sent = sd_bus_call_async(bus, nil, message, answered, userdata, 30_000_000)
                guard sent >= 0 else { throw CallFlood.Failure.bus("cannot send GetAll: \(-sent)") }
                state.outstanding += 1
            }
            let processed = sd_bus_process(bus, nil)
            guard processed >= 0 else { throw CallFlood.Failure.bus("the bus connection failed: \(-processed)") }
            if processed == 0 { _ = sd_bus_wait(bus, 100_000) }
        }
        withExtendedLifetime((caller, state)) {}
        return state.tally
    }

    private final class FloodState {
        var outstanding = 0
        var tally = Tally()
    }

    private static let answered: sd_bus_message_handler_t = { reply, userdata, _ in
        guard let reply, let userdata else { return 0 }
        let state = Unmanaged<FloodState>.fromOpaque(userdata).takeUnretainedValue()
        state.outstanding -= 1
        if sd_bus_message_is_method_error(reply, nil) != 0 {
            state.tally.errors += 1
        } else {
            state.tally.replies += 1
        }
        return 0
    }
}

import CSystemd
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// One sd-bus connection that makes blocking method calls to the daemon's object, for the floods.
final class BusCaller {
    /// The connection, for callers that drive it themselves (`BusGetAllFlood`); closed with the caller.
    let bus: OpaquePointer
    static let destination = "io.github.pwflagsd.Flags1"
    static let path = "/io/github/pwflagsd/Flags1"

    init(address: String) throws {
        var bus: OpaquePointer?
        guard sd_bus_new(&bus) >= 0, let bus else { throw CallFlood.Failure.bus("sd_bus_new failed") }
        self.bus = bus
        sd_bus_set_address(bus, address)
        sd_bus_set_bus_client(bus, 1)
        let started = sd_bus_start(bus)
        guard started >= 0 else { throw CallFlood.Failure.bus("cannot reach the bus at \(address): \(-started)") }
    }

    deinit {
        sd_bus_flush_close_unref(bus)
    }

    /// Whether the daemon owns its name within `timeout` (it takes the name after it is ready).
    func waitForDaemon(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var creds: OpaquePointer?
            if sd_bus_get_name_creds(bus, Self.destination, 0, &creds) >= 0 {
                sd_bus_creds_unref(creds)
                return true
            }
            usleep(10_000)
        }
        return false
    }

    func flood(_ call: FloodCall, count: Int) throws -> CallFlood.Tally {
        guard let method = call.bus else { throw CallFlood.Failure.bus("\(call.name) is not a bus call") }
        var tally = CallFlood.Tally()
        for _ in 0..<count {
            tally.count(error: try self.call(method))
        }
        return tally
    }

    /// The bus's own `GetId`, answered by the bus rather than the daemon: what a call costs on the bus alone.
    func callTheBus() throws -> String? {
        try call(
            (interface: "org.freedesktop.DBus", member: "GetId", signature: "", arguments: []),
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus")
    }

    /// One round trip; the D-Bus error's name and message, or nil for an answer.
    private func call(
        _ method: (interface: String, member: String, signature: String, arguments: [String]),
        destination: String = BusCaller.destination, path: String = BusCaller.path
    ) throws -> String? {
        var message: OpaquePointer?
        let made = sd_bus_message_new_method_call(
            bus, &message, destination, path, method.interface, method.member)
        guard made >= 0, let message else { throw CallFlood.Failure.bus("cannot make a \(method.member) call") }
        defer { sd_bus_message_unref(message) }
        for (type, argument) in zip(method.signature.utf8, method.arguments) {
            let appended: Int32
            if type == UInt8(ascii: "b") {
                var value: Int32 = argument == "true" ? 1 : 0
                appended = sd_bus_message_append_basic(message, CChar(type), &value)
            } else {
                appended = argument.withCString { sd_bus_message_append_basic(message, CChar(type), $0) }
            }
            guard appended >= 0 else { throw CallFlood.Failure.bus("cannot append \(argument) to \(method.member)") }
        }
        var reply: OpaquePointer?
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer { sd_bus_error_free(&error) }
        let result = sd_bus_call(bus, message, 0, &error, &reply)
        if let reply { sd_bus_message_unref(reply) }
        guard result < 0 else { return nil }
        // A connection that is gone is the bus's failure, not an answer.
        if result == -ECONNRESET || result == -ENOTCONN || result == -ETIMEDOUT {
            throw CallFlood.Failure.noAnswer(call: method.member, after: 0)
        }
        let name = error.name.map { String(cString: $0) } ?? "errno \(-result)"
        return name + (error.message.map { ": " + String(cString: $0) } ?? "")
    }
}

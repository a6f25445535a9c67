import CSystemd
import CSystemdBus
import FlagsCore
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to a message bus through sd-bus: every `sd_bus_*` call on the connection itself, handing
/// back Swift types. Not thread-safe, as sd-bus is not: only the loop's thread (`BusLoop`) touches it.
final class BusConnection {
    let bus: OpaquePointer
    private var slot: OpaquePointer?

    /// Opens a connection to `kind`'s bus; with `watchBind` a bus socket that does not exist yet is waited for
    /// (sd-bus watches its directory) instead of failing, so a daemon started before the bus serves later.
    init(kind: MessageBus, description: String) throws(SystemError) {
        var bus: OpaquePointer?
        let opened = sd_bus_new(&bus)
        guard opened >= 0, let bus else { throw SystemError("sd_bus_new", errno: -opened) }
        do {
            try Self.check("sd_bus_set_description", sd_bus_set_description(bus, description))
            try Self.setAddress(bus, kind: kind)
            try Self.check("sd_bus_set_bus_client", sd_bus_set_bus_client(bus, 1))
            try Self.check("sd_bus_set_watch_bind", sd_bus_set_watch_bind(bus, 1))
            try Self.check("sd_bus_set_connected_signal", sd_bus_set_connected_signal(bus, 1))
            try Self.check("sd_bus_start", sd_bus_start(bus))
        } catch {
            sd_bus_close_unref(bus)
            throw error
        }
        // Only now: an initializer that throws once every stored property is set runs `deinit`, which would
        // release the bus a second time (sd-bus then aborts the daemon closing a descriptor already closed).
        self.bus = bus
    }

    deinit {
        if let slot { sd_bus_slot_unref(slot) }
        // Not sd_bus_flush_close_unref: a flush waits without a bound, for a bus that never finished the hello
        // too. `flush(within:)` sent what it could.
        sd_bus_close_unref(bus)
    }

    /// The address sd-bus's own `sd_bus_open_system`/`_user` would use: `$DBUS_SYSTEM_BUS_ADDRESS` or the
    /// system bus's socket; `$DBUS_SESSION_BUS_ADDRESS` or the user's bus under `$XDG_RUNTIME_DIR`. Throws, saying
    /// so, when the session bus has neither.
    private static func setAddress(_ bus: OpaquePointer, kind: MessageBus) throws(SystemError) {
        let address: String
        switch kind {
        case .system:
            address =
                getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) } ?? "unix:path=/run/dbus/system_bus_socket"
        case .session:
            if let given = getenv("DBUS_SESSION_BUS_ADDRESS").map({ String(cString: $0) }) {
                address = given
            } else if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }) {
                address = "unix:path=\(runtime)/bus"
            } else {
                throw SystemError(
                    "no session bus: neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set", errno: ENOENT)
            }
        }
        try check("sd_bus_set_address", sd_bus_set_address(bus, address))
    }

    private static func check(_ call: String, _ result: Int32) throws(SystemError) {
        guard result >= 0 else { throw SystemError(call, errno: -result) }
    }

    /// The descriptor the loop polls, the events it waits for, and until when (`CLOCK_MONOTONIC` µs; nil: none).
    var descriptor: Int32 { sd_bus_get_fd(bus) }
    var events: Int16 { Int16(truncatingIfNeeded: max(0, sd_bus_get_events(bus))) }
    var deadline: UInt64? {
        var microseconds: UInt64 = 0
        guard sd_bus_get_timeout(bus, &microseconds) >= 0, microseconds != UInt64.max else { return nil }
        return microseconds
    }

    /// Does whatever arrived or is due; false when there is nothing more for now. Throws when the connection is
    /// lost.
    func process() throws(SystemError) -> Bool {
        let result = sd_bus_process(bus, nil)
        if result < 0 { throw SystemError("sd_bus_process", errno: -result) }
        return result > 0
    }

    /// True while messages sent wait to leave for the bus (it has not read them yet).
    var hasQueuedWrites: Bool {
        var count: UInt64 = 0
        return sd_bus_get_n_queued_write(bus, &count) >= 0 && count > 0
    }

    /// True once the connection is up and the bus said hello.
    var isReady: Bool { sd_bus_is_ready(bus) > 0 }

    /// Serves the object at `path` with `interface`, calls going to `method` and property reads to `property`.
    func addObject(
        path: String, interface: String, userdata: UnsafeMutableRawPointer,
        method: pwflagsd_bus_method, property: pwflagsd_bus_property
    ) throws(SystemError) {
        var slot: OpaquePointer?
        try Self.check(
            "sd_bus_add_object_vtable",
            pwflagsd_bus_add_object(bus, &slot, path, interface, method, property, userdata))
        self.slot = slot
    }

    /// Asks for `name` without waiting for the answer (the loop must not block before the bus is up); the bus
    /// queues the request while another connection owns it (an old daemon still stopping during a restart).
    /// `answered` hears the bus's reply on this thread.
    func requestName(
        _ name: String, userdata: UnsafeMutableRawPointer, answered: sd_bus_message_handler_t
    ) throws(SystemError) {
        try Self.check(
            "sd_bus_request_name_async", sd_bus_request_name_async(bus, nil, name, 0, answered, userdata))
    }

    /// Asks the bus which user `sender` connected as (`GetConnectionUnixUser`), without waiting: `answered`
    /// hears the reply on this thread, inside `process`, within `timeout` nanoseconds (sd-bus answers with an
    /// error of its own when the bus does not). Returns the call's serial, which the reply's `replyCookie`
    /// carries; nil when the call could not be sent.
    ///
    /// Never `sd_bus_get_name_creds`: that call waits for the bus, and every message that arrives meanwhile
    /// piles into sd-bus's receive queue, which then drains with a copy of the queue per message. A member
    /// connecting, calling and hanging up in a loop kept the thread in that copy for minutes.
    func askUser(
        of sender: String, timeout: UInt64, userdata: UnsafeMutableRawPointer, answered: sd_bus_message_handler_t
    ) -> UInt64? {
        var message: OpaquePointer?
        guard
            sd_bus_message_new_method_call(
                bus, &message, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                "GetConnectionUnixUser") >= 0, let message
        else { return nil }
        let call = BusMessage(owning: message)
        call.append(sender)
        guard sd_bus_call_async(bus, nil, message, answered, userdata, timeout / 1000) >= 0 else { return nil }
        return call.cookie
    }

    /// Sends `message` (a signal or a reply) and releases it.
    func send(_ message: BusMessage) {
        _ = sd_bus_send(bus, message.raw, nil)
    }

    /// Sends what is queued (replies to the last calls) for at most `limit` nanoseconds, for a clean shutdown;
    /// never waits for a bus that does not read or never said hello.
    func flush(within limit: UInt64) {
        guard isReady else { return }
        let deadline = MonotonicClock.nanoseconds() + limit
        while events & Int16(POLLOUT) != 0 {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return }
            var descriptor = pollfd(fd: self.descriptor, events: Int16(POLLOUT), revents: 0)
            guard poll(&descriptor, 1, Int32(clamping: (deadline - now) / 1_000_000 + 1)) > 0 else { return }
            guard (try? process()) != nil else { return }
        }
    }

    /// A new signal of `interface` from `path`.
    func signal(path: String, interface: String, member: String) -> BusMessage? {
        var message: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &message, path, interface, member) >= 0, let message else { return nil }
        return BusMessage(owning: message)
    }

    /// `PropertiesChanged` for `names` of `interface` at `path`; their values come from the property reader.
    func emitPropertiesChanged(path: String, interface: String, names: [String]) {
        var pointers = names.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        _ = pointers.withUnsafeMutableBufferPointer { buffer in
            sd_bus_emit_properties_changed_strv(bus, path, interface, buffer.baseAddress)
        }
    }
}

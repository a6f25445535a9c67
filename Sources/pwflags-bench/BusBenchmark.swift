import CSystemd
import Foundation
import PWFlagsTestKit
import UnixIO

/// The daemon on D-Bus (docs/dbus.md), on a private `dbus-daemon` started for the run: a `Get` round trip against
/// `org.freedesktop.DBus.Peer.Ping` to the same daemon through the same bus (what the bus itself costs), and
/// against a line `get` of the same flag on the same daemon (what the bus's two hops cost, beside the socket's
/// one); and a change reaching 100 connections subscribed to the `Changed` signal.
enum BusBenchmark {
    static let section = "D-Bus"
    static let name = "io.github.pwflagsd.Flags1"
    static let path = "/io/github/pwflagsd/Flags1"

    static func run(bench: Benchmark, extent: Extent, report: Report, directory: TemporaryDirectory) throws {
        guard let bus = try PrivateBus(directory: directory) else {
            report.add(section, "Get round trip against Ping (dbus-daemon missing)", .nan, "x", target: "≤ 1.3x")
            return
        }
        defer { bus.stop() }
        let daemon = try bench.localDaemon(
            flags: 100, name: "dbus", extra: "[DBus]\nBus=session\n",
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { daemon.cleanUp() }
        let client = try BusClient(address: bus.address)
        guard client.waitForName(name, timeout: .seconds(30)) else {
            report.add(section, "Get round trip against Ping (the daemon never owned its name)", .nan, "x")
            return
        }
        let count = extent.pick(full: 10_000, quick: 2_000, smoke: 50)
        let lineGet = RoundTrips.lineGet("new_checkout", on: try daemon.connect())
        func lineRounds(_ rounds: Int) throws -> Double { try RoundTrips.mean(rounds, lineGet) }
        // Warm the three paths, then alternate rounds so that a busy moment falls on all alike.
        _ = client.rounds(count / 10, method: .ping)
        _ = client.rounds(count / 10, method: .get)
        _ = try lineRounds(count / 10)
        var ping: [Double] = []
        var get: [Double] = []
        var line: [Double] = []
        for _ in 0..<5 {
            ping.append(client.rounds(count / 5, method: .ping))
            get.append(client.rounds(count / 5, method: .get))
            line.append(try lineRounds(count / 5))
        }
        let pingMedian = ping.sorted()[2]
        let getMedian = get.sorted()[2]
        let lineMedian = line.sorted()[2]
        report.add(section, "Ping round trip (the bus's floor)", pingMedian / 1000, "µs")
        report.add(section, "Get round trip", getMedian / 1000, "µs")
        report.add(section, "line protocol get round trip, same daemon", lineMedian / 1000, "µs")
        let ratio = getMedian / pingMedian
        report.add(section, "Get against Ping", ratio, "x", target: "≤ 1.3x", met: ratio <= 1.3)
        report.add(section, "Get against line get", getMedian / lineMedian, "x")
        try fanOut(daemon: daemon, address: bus.address, subscribers: 100, report: report)
    }

    /// From a flags-file change to the last of `subscribers` bus connections receiving the `Changed` signal.
    private static func fanOut(daemon: DaemonProcess, address: String, subscribers: Int, report: Report) throws {
        let clients = try (0..<subscribers).map { _ in try BusClient(address: address) }
        for client in clients { client.subscribe() }
        // A round trip on each connection: its match rule is in place once the bus answered a later call.
        for client in clients { _ = client.rounds(1, method: .ping) }
        let start = MonotonicClock.nanoseconds()
        try daemon.directory.write("flags.json", Measure.flagsFile(Measure.flags(100, variant: 1)))
        let deadline = start + 60_000_000_000
        var pending = Set(clients.indices)
        var last = start
        while !pending.isEmpty, MonotonicClock.nanoseconds() < deadline {
            var descriptors = pending.map { pollfd(fd: clients[$0].descriptor, events: Int16(POLLIN), revents: 0) }
            _ = poll(&descriptors, nfds_t(descriptors.count), 100)
            for index in pending where clients[index].receivedSignal() {
                pending.remove(index)
                last = MonotonicClock.nanoseconds()
            }
        }
        let label = "a change reaching \(subscribers) signal subscribers"
        report.add(section, label, pending.isEmpty ? Double(last - start) / 1e6 : .nan, "ms")
    }
}

/// One sd-bus connection of the bench's own, blocking calls only.
private final class BusClient {
    enum Method { case ping, get }

    private let bus: OpaquePointer
    private var received = false

    init(address: String) throws {
        var bus: OpaquePointer?
        guard sd_bus_new(&bus) >= 0, let bus else { throw SystemError("sd_bus_new", errno: ENOMEM) }
        self.bus = bus
        sd_bus_set_address(bus, address)
        sd_bus_set_bus_client(bus, 1)
        let started = sd_bus_start(bus)
        guard started >= 0 else { throw SystemError("sd_bus_start", errno: -started) }
    }

    deinit {
        sd_bus_flush_close_unref(bus)
    }

    var descriptor: Int32 { sd_bus_get_fd(bus) }

    /// Waits until `name` has an owner.
    func waitForName(_ name: String, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var creds: OpaquePointer?
            if sd_bus_get_name_creds(bus, name, 0, &creds) >= 0 {
                sd_bus_creds_unref(creds)
                return true
            }
            usleep(10_000)
        }
        return false
    }

    /// `count` calls one after another; nanoseconds per call.
    func rounds(_ count: Int, method: Method) -> Double {
        let start = MonotonicClock.nanoseconds()
        for _ in 0..<count { call(method) }
        return Double(MonotonicClock.nanoseconds() - start) / Double(max(count, 1))
    }

    private func call(_ method: Method) {
        var message: OpaquePointer?
        let interface = method == .ping ? "org.freedesktop.DBus.Peer" : BusBenchmark.name
        let member = method == .ping ? "Ping" : "Get"
        guard
            sd_bus_message_new_method_call(bus, &message, BusBenchmark.name, BusBenchmark.path, interface, member) >= 0,
            let message
        else { return }
        defer { sd_bus_message_unref(message) }
        if method == .get {
            _ = "new_checkout".withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
        }
        var reply: OpaquePointer?
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        _ = sd_bus_call(bus, message, 0, &error, &reply)
        sd_bus_error_free(&error)
        if let reply { sd_bus_message_unref(reply) }
    }

    /// Adds the match for the daemon's `Changed` signal (the reply is not waited for).
    func subscribe() {
        let rule = "type='signal',interface='\(BusBenchmark.name)',member='Changed'"
        _ = sd_bus_add_match_async(
            bus, nil, rule,
            { message, userdata, _ in
                guard let message, let userdata, sd_bus_message_is_signal(message, BusBenchmark.name, "Changed") > 0
                else {
                    return 0
                }
                Unmanaged<BusClient>.fromOpaque(userdata).takeUnretainedValue().received = true
                return 0
            }, nil, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Processes what arrived; true once the `Changed` signal did.
    func receivedSignal() -> Bool {
        while sd_bus_process(bus, nil) > 0 {}
        return received
    }
}

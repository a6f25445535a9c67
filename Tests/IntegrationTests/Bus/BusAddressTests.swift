import FlagsCore
import Foundation
import TestSupport
import Testing

/// A bus the daemon cannot even try to reach, because the environment names none or names it in a form sd-bus
/// does not take (a well-formed address nothing serves yet is waited for instead, as a bus that starts later): the
/// daemon keeps serving its socket, says why in `status` and once in the log, and stops cleanly. (Both used to
/// abort the daemon inside sd-bus: the failed connection was released twice.)
@Suite(.hangLimit) struct BusAddressTests {
    enum Environment: String, CaseIterable, CustomTestStringConvertible {
        /// `Bus=session` with neither `DBUS_SESSION_BUS_ADDRESS` nor `XDG_RUNTIME_DIR`, as under a service
        /// manager that gives the daemon no session.
        case noSessionAddress
        /// A `DBUS_SESSION_BUS_ADDRESS` that is no address.
        case malformedAddress

        var testDescription: String { rawValue }

        /// The launcher that execs the daemon with the environment this case needs.
        var launcher: [String] {
            switch self {
            case .noSessionAddress:
                ["/usr/bin/env", "-u", "DBUS_SESSION_BUS_ADDRESS", "-u", "XDG_RUNTIME_DIR"]
            case .malformedAddress:
                ["/usr/bin/env", "-u", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS=nonsense"]
            }
        }

        /// What the reason in `status` and the log says.
        var reason: String {
            switch self {
            case .noSessionAddress: "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set"
            case .malformedAddress: "sd_bus_start"
            }
        }
    }

    @Test(arguments: Environment.allCases)
    func theSocketServesAndStatusSaysWhyTheBusIsOut(_ environment: Environment) async throws {
        let daemon = try DaemonProcess.serving(
            [Fixtures.checkout], extra: "[DBus]\nBus=session\n", launcher: environment.launcher)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let get = try client.request(#"{"id":1,"method":"get","params":{"key":"new_checkout"}}"#)
        #expect(get?["result"]?["flag"]?["key"] == "new_checkout")

        // The first attempt is made as the loop starts: wait for its verdict, then for a retry or two.
        var bus: JSONValue?
        let reported = await Eventually.wait {
            bus = try? client.request(#"{"id":2,"method":"status"}"#)?["result"]?["bus"]
            return bus?["state"] == "unavailable"
        }
        try #require(reported, "status never said the bus was out: \(String(describing: bus))")
        #expect(bus?["bus"] == "session")
        let reason = bus?["reason"]?.stringValue ?? ""
        #expect(reason.contains(environment.reason), "\(reason)")
        #expect(daemon.isRunning)

        let warnings = daemon.log.components(separatedBy: "\n").filter {
            $0.contains("cannot connect to the session bus")
        }
        #expect(warnings.count == 1, "\(daemon.log)")
        #expect(warnings.first?.contains(environment.reason) == true, "\(daemon.log)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
    }
}

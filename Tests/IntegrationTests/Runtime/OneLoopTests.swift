import FlagsCore
import Foundation
import TestSupport
import Testing

/// Every surface on one event loop: with the line socket, Varlink, OFREP and the bus all on, the idle daemon runs
/// its main thread, the loop and the pool, and each surface answers a read (docs/architecture.md, Threads).
@Suite(.hangLimit) struct OneLoopTests {
    @Test func everySurfaceIsServedByOneLoopAndTheIdleDaemonRunsThreeThreads() throws {
        let directory = try TemporaryDirectory(prefix: "pwol")
        defer { directory.remove() }
        let bus = try #require(try PrivateBus(directory: directory), "dbus-daemon did not start")
        defer { bus.stop() }
        let (daemon, state) = try CallMemoryTests.daemon(
            extra: {
                "[Varlink]\nSocketPath=\($0.file("varlink.sock"))\n[OFREP]\nListenAddress=\($0.file("ofrep.sock"))\n"
                    + "[DBus]\nBus=session\n"
            }, environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer {
            daemon.cleanUp()
            state.unmount()
        }
        try #require(try CallFlood.waitForBusName(at: bus.address), "the daemon never owned its name")

        // Idle, every surface on: each surface's thread, and the watcher's, was one loop.
        let pid = daemon.process.processIdentifier
        let threads = OwnExecutorTests.threads(of: pid)
        let names = threads.map(\.name)
        for gone in ["pwflagsd-socket", "pwflagsd-varlink", "pwflagsd-ofrep", "pwflagsd-bus", "pwflagsd-watch"] {
            #expect(!names.contains(gone), "\(names)")
        }
        #expect(names.filter { $0 == "pwflagsd-loop" }.count == 1, "\(names)")
        // A sanitizer's thread, or qemu's, keeps the process's name.
        let allowance = Sanitizer.isActive || OwnExecutorTests.isEmulated(pid) ? 2 : 0
        #expect(threads.count <= 3 + allowance, "\(names)")

        let line = try daemon.connect()
        #expect(try line.call("get", ["key": "dark_mode"])?["result"]?["flag"]?["key"] == "dark_mode")
        let varlink = try VarlinkClient(socketPath: daemon.directory.file("varlink.sock"))
        #expect(try varlink.call("Get", ["key": "dark_mode"])?["parameters"]?["flag"]?["key"] == "dark_mode")
        let ofrep = try HTTPClient(unixSocket: daemon.directory.file("ofrep.sock"))
        #expect(ofrep.post("/ofrep/v1/evaluate/flags/dark_mode")?.status == 200)
        let busGet = try Command.run(
            "/usr/bin/busctl",
            [
                "--address=\(bus.address)", "call", "io.github.pwflagsd.Flags1", "/io/github/pwflagsd/Flags1",
                "io.github.pwflagsd.Flags1", "IsEnabled", "sb", "dark_mode", "false",
            ], check: false, timeout: .seconds(20))
        #expect(busGet.status == 0 && busGet.stdout.hasPrefix("b "), "\(busGet.stdout) \(busGet.stderr)")
    }
}

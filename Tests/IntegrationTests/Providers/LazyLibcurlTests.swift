import FlagsCore
import Foundation
import TestSupport
import Testing

/// libcurl and the libraries it brings are loaded at the daemon's first request to Pushwoosh, not at its start:
/// a daemon on a local flags file never maps them, and none delays READY=1.
@Suite(.hangLimit) struct LazyLibcurlTests {
    /// True when the process maps a libcurl file.
    static func mapsLibcurl(_ daemon: DaemonProcess) throws -> Bool {
        // Read to the end: /proc files have no size, and a read by size stops short.
        let file = try #require(FileHandle(forReadingAtPath: "/proc/\(daemon.process.processIdentifier)/maps"))
        defer { try? file.close() }
        let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        return maps.split(separator: "\n").contains { $0.contains("/libcurl") }
    }

    @Test("A daemon on a local flags file serves without ever mapping libcurl")
    func localFlagsNeverLoadLibcurl() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try session.result("get", ["key": "new_checkout"])?["flag"]?["enabled"]?.boolValue == true)
        _ = try session.result("status")
        #expect(try !Self.mapsLibcurl(daemon))
    }

    @Test("A Pushwoosh daemon maps libcurl at its first request, not before")
    func pushwooshLoadsLibcurlAtTheFirstRequest() async throws {
        // Lifecycle=client starts in the background: nothing is sent until the app comes to the foreground.
        let rig = try PushwooshRig.start(featureFlags: ["Lifecycle": "client"])
        defer { rig.stop() }
        let session = try SocketSession(socketPath: rig.daemon.socketPath)
        _ = try session.result("status")
        #expect(rig.server.requests.isEmpty)
        #expect(try !Self.mapsLibcurl(rig.daemon))
        _ = try session.result("setAppState", ["state": "foreground"])
        _ = try await rig.server.waitForRequests(count: 1)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(try Self.mapsLibcurl(rig.daemon))
    }
}

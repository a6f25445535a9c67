import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Failed refreshes (R11) and flags that outlive the server only until CacheMaxAge (R15).
@Suite(.hangLimit) struct RefreshFailureTests {
    /// Peak RSS growth allowed while a fault is handled: far below the 50 MiB a body may announce.
    static let peakGrowthLimit = 24 * 1024 * 1024

    /// Starts a daemon whose first reply stores `new_checkout` (for the TLS case: a daemon that serves it from
    /// the disk cache), makes the server misbehave as `fault` says, and checks what R11 and R15 promise: the
    /// refresh fails with the fault's status, `get`, the disk cache and `status.lastError` agree, the log says
    /// why, the refresh ends within `RequestTimeout`, and the daemon's peak memory barely moves.
    @Test(
        "R11: an upstream fault fails the refresh with its status; the stored flags stay", arguments: UpstreamFault.all)
    func r11UpstreamFault(_ fault: UpstreamFault) async throws {
        let server = try PushwooshRig.server()
        server.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        let timeout = fault.requestTimeout
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        let featureFlags = ["DisableThrottle": "yes"]
        let pushwoosh = ["RequestTimeout": "\(milliseconds)ms"]
        var daemon = try Fixtures.daemon(server, featureFlags: featureFlags, pushwoosh: pushwoosh)
        defer {
            daemon.cleanUp()
            server.stop()
        }
        var session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(await Eventually.wait { Fixtures.cacheText(daemon)?.contains("new_checkout") == true })
        switch fault.transport {
        case .reply(let reply): server.setDefaultReply(reply, for: "getFeatureFlags")
        case .refused: server.stop()
        case .tlsToPlainHTTP:
            // The stored flags come from the disk cache of the first daemon; the second speaks TLS to plain HTTP.
            daemon.stop()
            let https = "https://127.0.0.1:\(server.port)/json/1.3/"
            daemon = try Fixtures.daemon(
                server, featureFlags: featureFlags, pushwoosh: pushwoosh, serverURL: https, directory: daemon.directory)
            session = try SocketSession(socketPath: daemon.socketPath)
            #expect(try session.get("new_checkout")?.isNull == false)
        }
        let before = try #require(ProcessMemory.of(pid: daemon.process.processIdentifier))
        let clock = ContinuousClock()
        let started = clock.now
        let answer = try #require(try session.call("refresh", timeout: .seconds(30)))
        let elapsed = clock.now - started
        let after = try #require(ProcessMemory.of(pid: daemon.process.processIdentifier))

        #expect(answer["result"] == nil)
        #expect(answer["error"]?["code"]?.integerValue == -32000)
        #expect(answer["error"]?["data"]?["domain"]?.stringValue == "PWFeatureFlagsErrorDomain")
        #expect(answer["error"]?["data"]?["status"]?.integerValue == fault.status)
        #expect(try session.get("new_checkout")?["ruleId"]?.stringValue == "r_1a2b3c4d")
        #expect(Fixtures.cacheText(daemon)?.contains("new_checkout") == true)
        let lastError = try session.result("status")?["lastError"]
        #expect(lastError?["status"]?.integerValue == fault.status)
        #expect(lastError?["at"]?.stringValue != nil)
        let failures = daemon.log.split(separator: "\n").filter { $0.contains("refresh failed") }
        #expect(failures.contains { $0.contains("HTTP_STATUS=\(fault.status) ") }, "log: \(daemon.log)")
        #expect(elapsed < timeout + .seconds(2), "the refresh took \(elapsed)")
        let growth = after.peakResident - before.peakResident
        if Sanitizer.isActive {
            // A sanitizer's quarantine and shadow memory make the peak meaningless: the bound is for plain builds.
        } else {
            #expect(growth < Self.peakGrowthLimit, "VmHWM grew by \(growth) bytes")
        }
        // Not followed: every request the server saw is the daemon's own, to json/1.3/.
        #expect(server.requests.allSatisfy { $0.path == "/json/1.3/getFeatureFlags" })
        let line = failures.last.map(String.init) ?? "none"
        print(
            "fault \(fault.name): status \(fault.status) in \(elapsed), VmHWM \(before.peakResident / 1024) kB"
                + " -> \(after.peakResident / 1024) kB; log: \(line)")
    }

    @Test("R11: a success clears status.lastError")
    func r11SuccessClearsLastError() async throws {
        let rig = try PushwooshRig.start {
            $0.enqueue(.status(500), for: "getFeatureFlags")
            $0.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try await server.waitForRequests(count: 1)
        #expect(
            try await Eventually.wait { try session.result("status")?["lastError"]?["status"]?.integerValue == 500 })
        _ = try session.result("refresh")
        #expect(try session.result("status")?["lastError"]?.isNull == true)
    }

    @Test("R15: when the server cannot be reached the flags stay until CacheMaxAge, then go and listeners are told")
    func r15ExpiryWhenUnreachable() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let rig = try PushwooshRig.start(featureFlags: ["CacheMaxAge": "1s", "RetryBackoff": "200ms"]) {
            $0.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let fetched = clock.now
        server.stop()
        let listener = try SocketSession(socketPath: daemon.socketPath)
        let snapshot = try listener.result("listen")
        let stillThere = snapshot?["flags"]?.arrayValue?.first?["key"]?.stringValue
        #expect(stillThere == "new_checkout" || clock.now - fetched >= .seconds(1))
        let notification = listener.nextNotification(timeout: .seconds(5))
        #expect(notification?["params"]?["removed"]?.arrayValue == ["new_checkout"])
        // Not before CacheMaxAge: the fetch came after `start`.
        #expect(clock.now - start >= .milliseconds(950))
        #expect(try session.get("new_checkout")?.isNull == true)
        #expect(await Eventually.wait { Fixtures.cacheText(daemon) == nil })
    }
}

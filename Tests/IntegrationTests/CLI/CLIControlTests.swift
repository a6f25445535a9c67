import FlagsCore
import Foundation
import TestSupport
import Testing

/// The control methods from the shell: `pwflags set-user-id`, `app-state` and `push-registered`.
@Suite(.hangLimit) struct CLIControlTests {
    @Test("set-user-id sets the user the daemon reports, and \"\" goes back to the HWID")
    func setUserId() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let set = try CLI.run(["--socket", daemon.socketPath, "set-user-id", "alice"])
        #expect(set.status == 0)
        #expect(set.stdout == "alice\n")
        let status = try CLI.run(["--socket", daemon.socketPath, "--json", "status"])
        #expect(try JSONValue(parsing: status.stdout)["userId"] == "alice")
        let back = try CLI.run(["--socket", daemon.socketPath, "--json", "set-user-id", ""])
        let hwid = try JSONValue(parsing: status.stdout)["hwid"]
        #expect(try JSONValue(parsing: back.stdout)["userId"] == hwid)
    }

    @Test("app-state starts a session on the first foreground (Lifecycle=client); a bad state is a usage error")
    func appState() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all, extra: "[FeatureFlags]\nLifecycle=client\n")
        defer { daemon.cleanUp() }
        let first = try CLI.run(["--socket", daemon.socketPath, "app-state", "foreground"])
        #expect(first.status == 0)
        #expect(first.stdout == "a session started\n")
        let again = try CLI.run(["--socket", daemon.socketPath, "--json", "app-state", "foreground"])
        #expect(try JSONValue(parsing: again.stdout) == ["sessionStarted": false])
        let bad = try CLI.run(["--socket", daemon.socketPath, "app-state", "asleep"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("foreground or background"))
    }

    @Test("push-registered answers whether a refresh started (never with the local file)")
    func pushRegistered() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let result = try CLI.run(["--socket", daemon.socketPath, "--json", "push-registered"])
        #expect(result.status == 0)
        #expect(try JSONValue(parsing: result.stdout) == ["refreshStarted": false])
        for command in ["set-user-id", "app-state", "push-registered"] {
            #expect(try CLI.run([command, "--help"]).status == 0)
        }
    }

    @Test("A failed refresh is printed as the client library says it, with its status in the SDK's domain")
    func refreshFailurePrintsTheClientError() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["DisableThrottle": "yes"]) { server in
            server.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        // The first reply must have landed: a refresh while it is in flight would share it and succeed (R10).
        #expect(try await Fixtures.waitForFlag("new_checkout", on: SocketSession(socketPath: daemon.socketPath)))
        server.setDefaultReply(.status(503), for: "getFeatureFlags")
        let failed = try CLI.run(["--socket", daemon.socketPath, "refresh"])
        #expect(failed.status == 1, "\(failed)")
        let lines = failed.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(failed)")
        #expect(failed.stderr.hasPrefix("pwflags: refresh failed: "), "\(failed)")
        #expect(failed.stderr.hasSuffix(" (PWFeatureFlagsErrorDomain status 503)\n"), "\(failed)")
    }

    @Test("A broken configuration on reload prints each problem on its own line, and exits 1")
    func brokenReloadPrintsEveryProblem() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let original = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        try (original + "\n[FeatureFlags]\nRefreshInterval=soon\nNoSuchKey=1\n").write(
            toFile: daemon.configPath, atomically: true, encoding: .utf8)
        let failed = try CLI.run(["--socket", daemon.socketPath, "reload"])
        #expect(failed.status == 1, "\(failed)")
        let lines = failed.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == "pwflags: invalid configuration; the running one stays", "\(failed)")
        #expect(lines.count == 3, "\(failed)")
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("pwflags:   \(daemon.configPath):") }, "\(failed)")
    }
}

import FlagsCore
import Foundation
import TestSupport
import Testing

/// `explain` and `pwflags explain` on the real daemon: why a flag reads as it does, or why it reads as nothing.
@Suite(.hangLimit) struct ExplainTests {
    static func explain(_ key: String, on session: SocketSession) throws -> JSONValue {
        try #require(try session.result("explain", ["key": .string(key)]))
    }

    @Test("A flag a Pushwoosh rule decided: its rule, source, fetch time, expiry and next refresh")
    func matchedRuleFromPushwoosh() async throws {
        let rig = try PushwooshRig.start()
        defer { rig.stop() }
        let daemon = rig.daemon
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let result = try Self.explain("new_checkout", on: session)
        #expect(result["flag"]?["ruleId"] == "r_1a2b3c4d")
        #expect(result["source"] == "pushwoosh")
        #expect(result["rule"] == "matched")
        #expect(result["absence"] == .null)
        #expect(result["changedAtRevision"] == 1)
        #expect(result["revision"] == 1)
        #expect(result["fetchedAt"]?.stringValue != nil)
        #expect((result["ageSeconds"]?.numberValue ?? -1) >= 0)
        #expect(result["expiresAt"]?.stringValue != nil)
        #expect(result["nextRefreshAt"]?.stringValue != nil)
        #expect(result["lastError"] == .null)
        #expect(result["stale"] == false)
        #expect(result["partial"] == false)
    }

    @Test("Flags from the local file: the default rule, a killed flag, the file as their source, no expiry")
    func defaultAndKilledFromTheFile() throws {
        let killed = Flag(key: "old_search", isEnabled: false, ruleId: "")
        let daemon = try DaemonProcess.serving([Fixtures.banner, killed, Fixtures.checkout])
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        let banner = try Self.explain("banner", on: session)
        #expect(banner["rule"] == "default")
        #expect(banner["source"] == "file")
        #expect(banner["expiresAt"] == .null)
        let old = try Self.explain("old_search", on: session)
        #expect(old["rule"] == "killed")
        #expect(old["flag"]?["enabled"] == false)
        #expect(try Self.explain("new_checkout", on: session)["rule"] == "matched")
    }

    @Test("An overridden flag: the override as its source and rule, what the file holds beside it, counted in metrics")
    func overriddenFlag() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try #require(try session.result("setOverride", ["key": "dark_mode", "enabled": true]))
        let result = try Self.explain("dark_mode", on: session)
        #expect(result["source"] == "override")
        #expect(result["rule"] == "override")
        #expect(result["flag"]?["enabled"] == true)
        #expect(result["flag"]?["sourceValue"]?["enabled"] == false)
        let printed = try CLI.run(["--socket", daemon.socketPath, "explain", "dark_mode"])
        #expect(printed.stdout.contains("a local override"), "\(printed)")
        #expect(printed.stdout.contains("source says:  disabled"), "\(printed)")
        let families = try MetricsTests.metrics(on: session)
        #expect(PrometheusParser.value("pwflagsd_overrides", in: families) == 1)
    }

    @Test("An absent key says why: not in the response, or a key that differs only in case (suggested)")
    func absentKeysFromTheFile() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        let missing = try Self.explain("no_such_flag", on: session)
        #expect(missing["flag"] == .null)
        #expect(missing["absence"] == "notInResponse")
        #expect(missing["source"] == .null)
        let cased = try Self.explain("NEW_CHECKOUT", on: session)
        #expect(cased["absence"] == "caseDiffers")
        #expect(cased["similarKeys"] == ["New_Checkout", "new_checkout"])
        // A key that exists is never "similar" to itself.
        #expect(try Self.explain("new_checkout", on: session)["similarKeys"] == [])
    }

    @Test("Before any flags: no flags yet, with the failed refresh's status and the next attempt")
    func noFlagsYet() async throws {
        let rig = try PushwooshRig.start {
            $0.setDefaultReply(.status(503), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let daemon = rig.daemon
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Eventually.wait { try Self.explain("new_checkout", on: session)["lastError"] != .null })
        let result = try Self.explain("new_checkout", on: session)
        #expect(result["absence"] == "noFlags")
        #expect(result["lastError"]?["status"] == 503)
        #expect(result["fetchedAt"] == .null)
        #expect(result["nextRefreshAt"]?.stringValue != nil)
    }

    @Test("Flags that reached CacheMaxAge while the server was unreachable read as expired (R15)")
    func expired() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["CacheMaxAge": "1s"]) {
            $0.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
            $0.setDefaultReply(.status(503), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let daemon = rig.daemon
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let listener = try SocketSession(socketPath: daemon.socketPath)
        _ = try listener.result("listen", ["keys": ["new_checkout"]])
        #expect(listener.nextNotification(timeout: .seconds(5))?["params"]?["removed"] == ["new_checkout"])
        let result = try Self.explain("new_checkout", on: session)
        let status = try session.result("status")
        #expect(result["absence"] == "expired", "\(result) \(String(describing: status))")
        #expect(result["changedAtRevision"] == 2)
        #expect(result["fetchedAt"] == .null)
    }

    @Test("Without the file there are no flags yet")
    func noFileNoFlags() throws {
        let daemon = try DaemonProcess.serving(nil)
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try Self.explain("new_checkout", on: session)["absence"] == "noFlags")
    }

    @Test("The listeners of a key and the revision at which it last changed")
    func listenersAndChangedRevision() throws {
        let daemon = try DaemonProcess.serving([Fixtures.checkout, Fixtures.search])
        defer { daemon.cleanUp() }
        let chosen = try SocketSession(socketPath: daemon.socketPath)
        let everything = try SocketSession(socketPath: daemon.socketPath)
        let asker = try SocketSession(socketPath: daemon.socketPath)
        #expect(try chosen.result("listen", ["keys": ["new_checkout"]])?["subscription"] != nil)
        #expect(try everything.result("listen")?["subscription"] != nil)
        #expect(try Self.explain("new_checkout", on: asker)["subscriptions"] == 2)
        #expect(try Self.explain("search_v2", on: asker)["subscriptions"] == 1)

        var changed = Fixtures.checkout
        changed.isEnabled = false
        try daemon.writeFlags([changed, Fixtures.search])
        #expect(chosen.nextNotification()?["params"]?["revision"] == 2)
        let checkout = try Self.explain("new_checkout", on: asker)
        #expect(checkout["changedAtRevision"] == 2)
        #expect(checkout["revision"] == 2)
        #expect(try Self.explain("search_v2", on: asker)["changedAtRevision"] == 1)

        // A key that went away still tells when.
        try daemon.writeFlags([changed])
        #expect(everything.nextNotification()?["params"]?["revision"] == 2)
        #expect(everything.nextNotification()?["params"]?["removed"] == ["search_v2"])
        #expect(try Self.explain("search_v2", on: asker)["changedAtRevision"] == 3)

        // An ended subscription no longer counts.
        #expect(try chosen.result("unlisten", ["subscription": "s1"]) == [:])
        #expect(try Self.explain("new_checkout", on: asker)["subscriptions"] == 1)
    }

    @Test("pwflags explain: one screen for people, exit 1 for an absent key, --json the method's result")
    func commandLine() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let human = try CLI.run(["--socket", daemon.socketPath, "explain", "new_checkout"])
        #expect(human.status == 0, "\(human)")
        let lines = human.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "new_checkout: enabled")
        #expect(lines.contains { $0.contains("source:") && $0.contains("local flags file") })
        #expect(lines.contains { $0.contains("rule:") && $0.contains("matched rule r_1a2b3c4d") })
        #expect(lines.contains { $0.contains("changed:") && $0.contains("at revision 1") })
        #expect(lines.contains { $0.contains("listeners:") && $0.contains("0 subscriptions") })

        let absent = try CLI.run(["--socket", daemon.socketPath, "explain", "NEW_CHECKOUT"])
        #expect(absent.status == 1)
        #expect(absent.stdout.contains("did you mean 'New_Checkout' or 'new_checkout'?"), "\(absent)")

        let json = try CLI.run(["--socket", daemon.socketPath, "--json", "explain", "dark_mode"])
        #expect(json.status == 0)
        let value = try JSONValue(parsing: Array(json.stdout.utf8))
        #expect(value["key"] == "dark_mode")
        #expect(value["rule"] == "matched")
        #expect(value["source"] == "file")
        #expect(try CLI.run(["explain", "--help"]).status == 0)
        #expect(try CLI.run(["--socket", daemon.socketPath, "explain"]).status == 2)
    }
}

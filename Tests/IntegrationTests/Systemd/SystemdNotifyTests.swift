import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// D2: what the daemon tells systemd, seen on a fake NOTIFY_SOCKET, and reloads (SIGHUP, `pwflags reload`).
@Suite(.hangLimit) struct SystemdNotifyTests {
    static func localDaemon(environment: [String: String] = [:]) throws -> DaemonProcess {
        let directory = try TemporaryDirectory()
        try directory.write("flags.json", #"{"flags":[{"key":"a","enabled":true,"rule_id":"r1"}]}"#)
        return try DaemonProcess(
            config: "[FeatureFlags]\nLocalFlagsFile=\(directory.file("flags.json"))\n",
            directory: directory,
            environment: environment
        )
    }

    @Test("READY=1 comes with a STATUS= line naming the source and the flag count")
    func readyWithStatus() throws {
        let daemon = try Self.localDaemon()
        defer { daemon.cleanUp() }
        let ready = try #require(daemon.notify.waitFor("READY=1"))
        let status = try #require(ready.split(separator: "\n").first { $0.hasPrefix("STATUS=") })
        #expect(status.contains("Local file: 1 flags"))
    }

    @Test("WATCHDOG=1 is sent at half of WATCHDOG_USEC")
    func watchdogPings() throws {
        let daemon = try Self.localDaemon(environment: ["WATCHDOG_USEC": "200000"])
        defer { daemon.cleanUp() }
        let start = daemon.notify.received.count
        #expect(daemon.notify.waitFor("WATCHDOG=1", after: start) != nil)
        let second = daemon.notify.received.count
        #expect(daemon.notify.waitFor("WATCHDOG=1", after: second, timeout: .seconds(5)) != nil)
    }

    @Test("No WATCHDOG=1 without WATCHDOG_USEC")
    func noWatchdogWithoutInterval() throws {
        let daemon = try Self.localDaemon()
        defer { daemon.cleanUp() }
        // The daemon answers a request: the loop ran; it sent no ping.
        let client = try RawClient(socketPath: daemon.socketPath)
        #expect(try client.request(#"{"id":1,"method":"status"}"#) != nil)
        #expect(!daemon.notify.received.contains { $0.contains("WATCHDOG=1") })
    }

    @Test("SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1")
    func sighupReloads() throws {
        let daemon = try Self.localDaemon()
        defer { daemon.cleanUp() }
        let before = daemon.notify.received.count
        daemon.signal(SIGHUP)
        let reloading = try #require(daemon.notify.waitFor("RELOADING=1", after: before))
        #expect(reloading.contains("MONOTONIC_USEC="))
        let index = daemon.notify.received.firstIndex(of: reloading) ?? before
        #expect(daemon.notify.waitFor("READY=1", after: index + 1) != nil)
        #expect(daemon.isRunning)
    }

    @Test("pwflags reload answers once the new configuration is applied, between RELOADING=1 and READY=1")
    func cliReloadIsSynchronous() throws {
        let daemon = try Self.localDaemon()
        defer { daemon.cleanUp() }
        let before = daemon.notify.received.count
        let result = try CLI.run(["--socket", daemon.socketPath, "reload"])
        #expect(result.status == 0)
        #expect(result.stdout == "reloaded\n")
        // The answer came after the reload was applied: both messages are already on the socket.
        let reloading = try #require(daemon.notify.waitFor("RELOADING=1", after: before, timeout: .seconds(1)))
        let index = try #require(daemon.notify.received.firstIndex(of: reloading))
        #expect(daemon.notify.waitFor("READY=1", after: index + 1, timeout: .seconds(1)) != nil)
    }

    @Test("STOPPING=1 on SIGTERM, then exit 0")
    func stoppingOnSigterm() throws {
        let daemon = try Self.localDaemon()
        defer { daemon.cleanUp() }
        let before = daemon.notify.received.count
        daemon.signal(SIGTERM)
        #expect(daemon.notify.waitFor("STOPPING=1", after: before) != nil)
        #expect(daemon.waitForExit() == 0)
    }

    @Test("A broken configuration on reload keeps the running one, reports each problem, and keeps serving")
    func brokenReloadKeepsServing() throws {
        let daemon = try Self.localDaemon()
        defer { daemon.cleanUp() }
        let original = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        try (original + "\n[FeatureFlags]\nRefreshInterval=soon\nNoSuchKey=1\n").write(
            toFile: daemon.configPath, atomically: true, encoding: .utf8)
        let client = try RawClient(socketPath: daemon.socketPath)
        let answer = try #require(try client.request(#"{"id":1,"method":"reload"}"#))
        #expect(answer["error"]?["code"] == -32602)
        let list = try #require(answer["error"]?["data"]?["problems"]?.arrayValue)
        let problems = list.compactMap { $0.stringValue }
        #expect(problems.count == 2)
        #expect(problems.allSatisfy { $0.hasPrefix(daemon.configPath + ":") })
        #expect(problems.contains { $0.contains("invalid duration 'soon' for RefreshInterval") })
        #expect(problems.contains { $0.contains("unknown key 'NoSuchKey'") })
        let cli = try CLI.run(["--socket", daemon.socketPath, "reload"])
        #expect(cli.status == 1)
        #expect(cli.stderr.contains("NoSuchKey"))
        #expect(try client.request(#"{"id":2,"method":"get","params":{"key":"a"}}"#)?["result"]?["flag"]?["key"] == "a")
        #expect(daemon.log.contains("reload refused"))
    }

    @Test("A reload that shortens RefreshInterval makes the refresher use it")
    func reloadChangesRefreshInterval() async throws {
        let rig = try PushwooshRig.start(
            daemon: {
                try DaemonProcess(
                    config: "[Pushwoosh]\nApplicationCode=ABCDE-12345\nServerURL=\($0.baseURL)\n[FeatureFlags]\n"
                        + "RefreshInterval=1h\n")
            },
            replies: {
                $0.setDefaultReply(.flags([Flag(key: "a", isEnabled: true, ruleId: "r1")]), for: "getFeatureFlags")
            })
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        _ = try await server.waitForRequests(count: 1)
        let config = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        try config.replacingOccurrences(of: "RefreshInterval=1h", with: "RefreshInterval=200ms")
            .write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        let reload = try CLI.run(["--socket", daemon.socketPath, "reload"])
        #expect(reload.status == 0)
        // With 1h nothing more would come for an hour; with 200ms three more come at once.
        let requests = try await server.waitForRequests(count: 4, timeout: .seconds(10))
        #expect(requests.allSatisfy { $0.apiMethod == "getFeatureFlags" })
    }

    @Test("A reload that changes ApplicationCode discards the previous application's flags (R7)")
    func reloadChangingApplicationDiscardsFlags() async throws {
        let rig = try PushwooshRig.start(
            daemon: {
                try DaemonProcess(config: "[Pushwoosh]\nApplicationCode=AAAAA-11111\nServerURL=\($0.baseURL)\n")
            },
            replies: {
                $0.enqueue(.flags([Flag(key: "old", isEnabled: true, ruleId: "r1")]), for: "getFeatureFlags")
                $0.setDefaultReply(.hang, for: "getFeatureFlags")
            })
        defer { rig.stop() }
        let daemon = rig.daemon
        let client = try RawClient(socketPath: daemon.socketPath)
        let listen = try #require(try client.request(#"{"id":1,"method":"listen"}"#)?["result"])
        if listen["flags"]?.arrayValue?.isEmpty != false {
            #expect(client.readJSON()?["params"]?["changed"]?.arrayValue?.count == 1)
        }
        let config = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        try config.replacingOccurrences(of: "AAAAA-11111", with: "BBBBB-22222")
            .write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        let commands = try RawClient(socketPath: daemon.socketPath)
        #expect(try commands.request(#"{"id":2,"method":"reload"}"#)?["result"] == [:])
        let removed = try #require(client.readJSON())
        #expect(removed["params"]?["removed"] == ["old"])
        #expect(try commands.request(#"{"id":3,"method":"get","params":{"key":"old"}}"#)?["result"]?["flag"] == .null)
        let status = try #require(try commands.request(#"{"id":4,"method":"status"}"#)?["result"])
        #expect(status["applicationCode"] == "BBBBB-22222")
    }
}

/// D2: log entries go to the journal, with fields, when stderr is the journal.
@Suite(.hangLimit) struct JournalLoggingTests {
    @Test("With JOURNAL_STREAM naming stderr, entries go through sd_journal_sendv and the daemon keeps serving")
    func journalPathServes() throws {
        let directory = try TemporaryDirectory()
        try directory.write("flags.json", #"{"flags":[{"key":"a","enabled":true,"rule_id":"r1"}]}"#)
        let daemon = try DaemonProcess(
            config: "[FeatureFlags]\nLocalFlagsFile=\(directory.file("flags.json"))\n[Daemon]\nLogLevel=debug\n",
            directory: directory,
            stderrIsJournal: true
        )
        defer { daemon.cleanUp() }
        let client = try RawClient(socketPath: daemon.socketPath)
        // Each of these logs an entry with fields (FLAG_KEY, PWFLAGS_EVENT, …).
        #expect(try client.request(#"{"id":1,"method":"logImpression","params":{"key":"a"}}"#) != nil)
        #expect(try client.request(#"{"id":2,"method":"refresh"}"#) != nil)
        try directory.write("flags.json", #"{"flags":[{"key":"a","enabled":false,"rule_id":"r2"}]}"#)
        #expect(try client.request(#"{"id":3,"method":"reload"}"#)?["result"] == [:])
        #expect(try client.request(#"{"id":4,"method":"get","params":{"key":"a"}}"#)?["result"]?["flag"]?["key"] == "a")
        #expect(daemon.isRunning)
        // Nothing of the daemon's own went to stderr as plain lines: it took the journal path.
        #expect(!daemon.log.contains("loaded the local flags file"))
        #expect(!daemon.log.contains("feature flag impression"))
    }
}

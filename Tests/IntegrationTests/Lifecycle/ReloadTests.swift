import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Reloads are serialized and atomic: one at a time, a retired source stays silent, calls during a swap go to the
/// new source, and the flags served afterwards are those a restart would serve.
@Suite(.hangLimit) struct ReloadTests {
    /// Two reloads requested at the same moment.
    enum ConcurrentReloads: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case signalAndCall
        case twoCalls

        var testDescription: String { rawValue }
    }

    /// Replaces `old` with `new` in the daemon's configuration file.
    static func edit(_ daemon: DaemonProcess, replacing old: String, with new: String) throws {
        let text = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        #expect(text.contains(old), "the configuration holds no \(old)")
        try text.replacingOccurrences(of: old, with: new)
            .write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
    }

    /// The RELOADING=1 and READY=1 lines the daemon sent after message `start`, in order.
    static func reloadMarks(_ daemon: DaemonProcess, after start: Int) -> [String] {
        daemon.notify.received.dropFirst(start).flatMap { message in
            message.split(separator: "\n").map(String.init).filter { $0 == "RELOADING=1" || $0 == "READY=1" }
        }
    }

    /// Requests the two reloads of `kind` at once and returns when both are done.
    static func reloadTwice(_ daemon: DaemonProcess, _ kind: ConcurrentReloads) async throws {
        let before = daemon.notify.received.count
        let first = try RawClient(socketPath: daemon.socketPath)
        switch kind {
        case .signalAndCall:
            daemon.signal(SIGHUP)
            #expect(try first.call("reload")?["result"] == [:])
        case .twoCalls:
            let second = try RawClient(socketPath: daemon.socketPath)
            try first.send(line: #"{"id":1,"method":"reload"}"#)
            try second.send(line: #"{"id":2,"method":"reload"}"#)
            #expect(first.readResponse()?["result"] == [:])
            #expect(second.readResponse()?["result"] == [:])
        }
        // Each reload ends with READY=1: the second one is over when two came.
        #expect(await Eventually.wait { reloadMarks(daemon, after: before).filter { $0 == "READY=1" }.count >= 2 })
    }

    @Test(
        "Concurrent reloads leave one source: after setUserId no request for the previous user reaches Pushwoosh",
        arguments: ConcurrentReloads.allCases)
    func concurrentReloadsLeaveOneSource(_ kind: ConcurrentReloads) async throws {
        // Every source refreshes five times a second: one left running would keep asking for its user.
        let rig = try PushwooshRig.start(featureFlags: ["RefreshInterval": "200ms"], pushwoosh: ["DeviceType": "0"])
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        _ = try await server.waitForRequests(count: 1)
        let before = daemon.notify.received.count
        for round in 1...3 {
            // A change of the device type rebuilds the source.
            try Self.edit(daemon, replacing: "DeviceType=\(round - 1)", with: "DeviceType=\(round)")
            try await Self.reloadTwice(daemon, kind)
        }
        // RELOADING=1 and READY=1 alternate: never two reloads at once.
        let marks = Self.reloadMarks(daemon, after: before)
        #expect(marks.count == 12)
        #expect(marks == Array(repeating: ["RELOADING=1", "READY=1"], count: marks.count / 2).flatMap { $0 })

        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try session.result("setUserId", ["userId": "bob"])?["userId"] == "bob")
        let userOf = { (request: RecordedRequest) in request.requestObject?["userId"]?.stringValue }
        #expect(await Eventually.wait { server.requests.contains { userOf($0) == "bob" } })
        let firstForBob = try #require(server.requests.firstIndex { userOf($0) == "bob" })
        // A second of refreshes: a source still serving the previous user would ask for it about five times.
        let requests = try await server.waitForRequests(count: firstForBob + 6)
        #expect(requests[firstForBob...].allSatisfy { userOf($0) == "bob" })
        #expect(requests.last?.requestObject?["device_type"] == 3)
        #expect(try CacheFile.read(Fixtures.cachePath(daemon))?.userId == "bob")
    }

    @Test("A refresh in flight when the source is replaced is answered by the new source")
    func refreshDuringReloadGoesToNewSource() async throws {
        // The refresh for the first application is held until its caller leaves.
        let rig = try PushwooshRig.start(
            featureFlags: ["DisableThrottle": "yes"], applicationCode: "AAAAA-11111",
            replies: { server in
                server.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
                server.enqueue(.hang, for: "getFeatureFlags")
                server.setDefaultReply(.flags([Fixtures.search]), for: "getFeatureFlags")
            })
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let (session, refresher, held) = try await Fixtures.refreshHeld(on: daemon, by: server)
        #expect(held[1].requestObject?["application"] == "AAAAA-11111")

        try Self.edit(daemon, replacing: "AAAAA-11111", with: "BBBBB-22222")
        #expect(try session.result("reload") == [:])
        let answer = try #require(refresher.readResponse())
        #expect(answer["error"] == nil)
        #expect(answer["result"]?["fromNetwork"] == true)
        #expect(answer["result"]?["flags"]?.arrayValue?.map { $0["key"] } == ["search_v2"])
        let applications = server.requests.dropFirst(2).map { $0.requestObject?["application"] }
        #expect(!applications.isEmpty)
        #expect(applications.allSatisfy { $0 == "BBBBB-22222" })
    }

    @Test("Control calls that arrive while a reload swaps the source wait for the new one; reads do not wait")
    func callsDuringSwapGoToNewSource() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["DisableThrottle": "yes"], applicationCode: "AAAAA-11111")
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let requestsBefore = server.requests.count
        // The new source is a FIFO: the reload reads it while swapping, and waits there until the test writes.
        let path = daemon.directory.file("flags.json")
        #expect(mkfifo(path, 0o600) == 0)
        try Self.edit(daemon, replacing: "ApplicationCode=AAAAA-11111", with: "ApplicationCode=")
        try Self.edit(daemon, replacing: "[FeatureFlags]\n", with: "[FeatureFlags]\nLocalFlagsFile=\(path)\n")
        let reloader = try RawClient(socketPath: daemon.socketPath)
        try reloader.send(line: #"{"id":1,"method":"reload"}"#)
        // Returns once the daemon opened the FIFO for reading: the swap is under way.
        let writer = open(path, O_WRONLY | O_CLOEXEC)
        #expect(writer >= 0)
        let refresher = try RawClient(socketPath: daemon.socketPath)
        try refresher.send(line: #"{"id":2,"method":"refresh"}"#)
        let control = try RawClient(socketPath: daemon.socketPath)
        try control.send(line: #"{"id":3,"method":"setUserId","params":{"userId":"alice"}}"#)
        // Reads are answered during the swap, from what is served now.
        #expect(try session.result("status")?["source"] == "pushwoosh")
        #expect(try session.get("new_checkout")?["key"] == "new_checkout")

        // Later reads of the path find a regular file; the reload reads what the FIFO carries.
        let flags: JSONValue = ["flags": [FakeReply.json(of: Fixtures.search)]]
        try flags.serialized().write(toFile: path + ".new", atomically: false, encoding: .utf8)
        #expect(rename(path + ".new", path) == 0)
        let bytes = Array(flags.serialized().utf8)
        #expect(bytes.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) } == bytes.count)
        close(writer)

        #expect(reloader.readResponse()?["result"] == [:])
        let refreshed = try #require(refresher.readResponse())
        #expect(refreshed["result"]?["fromNetwork"] == false)
        #expect(refreshed["result"]?["flags"]?.arrayValue?.map { $0["key"] } == ["search_v2"])
        #expect(control.readResponse()?["result"]?["userId"] == "alice")
        let status = try #require(try session.result("status"))
        #expect(status["source"] == "file")
        #expect(status["userId"] == "alice")
        // Nothing went to Pushwoosh for the application the reload left.
        #expect(server.requests.count == requestsBefore)
    }

    @Test("A setUserId racing a reload that replaces the source sticks")
    func setUserIdDuringReloadSticks() async throws {
        let rig = try PushwooshRig.start(pushwoosh: ["DeviceType": "0"])
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        _ = try await server.waitForRequests(count: 1)
        let control = try RawClient(socketPath: daemon.socketPath)
        let reloader = try RawClient(socketPath: daemon.socketPath)
        for round in 1...10 {
            try Self.edit(daemon, replacing: "DeviceType=\(round - 1)", with: "DeviceType=\(round)")
            try reloader.send(line: #"{"id":1,"method":"reload"}"#)
            try control.send(line: #"{"id":2,"method":"setUserId","params":{"userId":"user\#(round)"}}"#)
            #expect(control.readResponse()?["result"]?["userId"] == .string("user\(round)"))
            #expect(reloader.readResponse()?["result"] == [:])
            let status = try #require(try control.call("status")?["result"])
            #expect(status["userId"] == .string("user\(round)"), "round \(round)")
        }
        // The last request the daemon made is by the order it connected in: a retired stack's request sent just
        // before a swap can be read after the new stack's on a loaded machine (the likely cause of one failure
        // under AddressSanitizer beside two other test processes; the message now shows the order). About a
        // second alone; more than ten under ThreadSanitizer beside other builds (seen once), hence the deadline.
        let settled = await Eventually.wait(timeout: .seconds(30)) {
            server.requests.max { $0.connection < $1.connection }?.requestObject?["userId"] == "user10"
                && (try? CacheFile.read(Fixtures.cachePath(daemon)))??.userId == "user10"
        }
        let asked = server.requests.map { "\($0.connection):\($0.requestObject?["userId"]?.stringValue ?? "-")" }
        let cached = (try? CacheFile.read(Fixtures.cachePath(daemon)))??.userId
        #expect(settled, "requests' users: \(asked); cache: \(cached ?? "none")\n\(daemon.log.suffix(4000))")
    }

    @Test("A reload to a ServerURL that does not end with json/1.3/ serves no flags and says why (R16)")
    func reloadToBadServerURLServesNothing() async throws {
        let rig = try PushwooshRig.start()
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(await Eventually.wait { Fixtures.cacheText(daemon)?.contains("new_checkout") == true })
        let listener = try RawClient(socketPath: daemon.socketPath)
        _ = try listener.call("listen")

        try Self.edit(daemon, replacing: "/json/1.3/", with: "/json/1.2/")
        #expect(try session.result("reload") == [:])
        #expect(try session.get("new_checkout") == .null)
        #expect(try session.keys().isEmpty)
        let change = try listener.nextChange()
        #expect(change.removed == ["new_checkout"])
        let status = try #require(try session.result("status"))
        #expect(status["problem"]?.stringValue?.contains("json/1.3/") == true)
        #expect(status["fetchedAt"] == .null)
        let refresh = try #require(try session.call("refresh"))
        #expect(refresh["error"]?["data"]?["status"] == 0)

        // Back to the proxy that works: the disk cache is served at once, as after a restart.
        let requestsBefore = server.requests.count
        server.setDefaultReply(.hang, for: "getFeatureFlags")
        try Self.edit(daemon, replacing: "/json/1.2/", with: "/json/1.3/")
        #expect(try session.result("reload") == [:])
        #expect(try session.get("new_checkout")?["key"] == "new_checkout")
        #expect(try session.result("status")?["problem"] == .null)
        // The reload fetches from the restored address too; it hangs, so what `get` served above was the cache.
        #expect(
            await Eventually.wait {
                server.requests.dropFirst(requestsBefore).contains {
                    $0.apiMethod == "getFeatureFlags" && $0.path.contains("/json/1.3/")
                }
            }, "no fetch after the reload: \(server.requests.dropFirst(requestsBefore).map(\.path))")
    }

    @Test("A reload that changes only RequestTimeout keeps the session and its impressions, and applies the timeout")
    func requestTimeoutOnlyReloadKeepsSession() async throws {
        let rig = try PushwooshRig.start(
            featureFlags: ["DisableThrottle": "yes"], pushwoosh: ["RequestTimeout": "10s"],
            replies: { server in
                server.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
                server.setDefaultReply(.hang, for: "getFeatureFlags")
            })
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(try session.result("logImpression", ["key": "new_checkout"])?["outcome"] == "sent")
        let before = try #require(try session.result("status"))

        try Self.edit(daemon, replacing: "RequestTimeout=10s", with: "RequestTimeout=300ms")
        #expect(try session.result("reload") == [:])
        // The same session: the impression is a repeat, and nothing was asked of Pushwoosh.
        #expect(try session.result("logImpression", ["key": "new_checkout"])?["outcome"] == "duplicate")
        let after = try #require(try session.result("status"))
        #expect(after["sessionStartedAt"] == before["sessionStartedAt"])
        #expect(after["fetchedAt"] == before["fetchedAt"])
        #expect(after["impressions"] == ["sent": 1, "duplicate": 1, "failed": 0, "logged": 0])

        // The new timeout holds: a refresh against a server that never answers fails within it, not after 10 s.
        let refresh = try #require(try session.call("refresh", timeout: .seconds(5)))
        #expect(refresh["error"]?["data"]?["status"] == 0)
        let flagRequests = server.requests.filter { $0.apiMethod == "getFeatureFlags" }
        #expect(flagRequests.count == 2)
        #expect(server.requests.filter { $0.apiMethod == "postEvent" }.count == 1)
    }

    @Test("A reload to another source that serves the same flags changes only each flag's source")
    func reloadToSameFlagsChangesOnlyTheSource() async throws {
        let rig = try PushwooshRig.start()
        defer { rig.stop() }
        let daemon = rig.daemon
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let revision = try #require(try session.result("getAll")?["revision"])
        let file = daemon.directory.file("flags.json")
        // The file holds exactly what Pushwoosh sent.
        let flags: JSONValue = ["flags": [FakeReply.json(of: Fixtures.checkout)]]
        try flags.serialized().write(toFile: file, atomically: true, encoding: .utf8)
        try Self.edit(daemon, replacing: "ApplicationCode=ABCDE-12345", with: "ApplicationCode=")
        try Self.edit(daemon, replacing: "[FeatureFlags]\n", with: "[FeatureFlags]\nLocalFlagsFile=\(file)\n")
        #expect(try session.result("reload") == [:])
        #expect(try session.result("status")?["source"] == "file")
        // The flag object says where its value comes from, so the swap is one change (R9) and nothing more.
        let listing = try #require(try session.result("getAll"))
        #expect(listing["revision"]?.integerValue == (revision.integerValue ?? 0) + 1)
        #expect(listing["flags"] == [Fixtures.wireValue(Fixtures.checkout, source: "file")])
    }
}

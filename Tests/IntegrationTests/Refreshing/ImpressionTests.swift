import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// R17, R18 against the real daemon and the fake Pushwoosh server.
@Suite(.hangLimit) struct ImpressionTests {
    static let checkout = Flag(
        key: "new_checkout", isEnabled: true, ruleId: "r_1a2b3c4d", properties: ["color": "green"])
    static let banner = Flag(key: "banner", isEnabled: false, ruleId: "default")

    /// A rig whose daemon has `flags` already fetched and served, and a client connected to it. `clientLifecycle`:
    /// with `Lifecycle=client`, the client having brought the app to the foreground (the session that fetched).
    static func start(
        flags: [Flag] = [checkout, banner], extra: String = "", clientLifecycle: Bool = false,
        directory: TemporaryDirectory? = nil, environment: [String: String] = [:]
    ) async throws -> (PushwooshRig, RawClient) {
        let rig = try PushwooshRig.start(
            daemon: { server in
                try DaemonProcess(
                    config: """
                        [Pushwoosh]
                        ApplicationCode=ABCDE-12345
                        ServerURL=\(server.baseURL)
                        HWID=hwid-1
                        [FeatureFlags]
                        RefreshThrottle=1h
                        \(clientLifecycle ? "Lifecycle=client" : "")
                        \(extra)
                        """, directory: directory, environment: environment
                )
            },
            replies: { $0.setDefaultReply(.flags(flags), for: "getFeatureFlags") })
        do {
            let client = try RawClient(socketPath: rig.daemon.socketPath)
            if clientLifecycle {
                #expect(try client.request(foreground)?["result"]?["sessionStarted"] == true)
            }
            try await waitForFlag(flags.first?.key ?? "", client: client)
            return (rig, client)
        } catch {
            rig.stop()
            throw error
        }
    }

    /// Subscribes and reads notifications until `key` reads as a flag: the signal that a fetch landed.
    static func waitForFlag(_ key: String, client: RawClient) async throws {
        let snapshot = try #require(try client.request(#"{"id":"w","method":"listen","params":{"keys":["\#(key)"]}}"#))
        var found = snapshot["result"]?["flags"]?.arrayValue?.isEmpty == false
        while !found {
            let notification = try #require(client.readJSON(), "no flagsChanged for \(key)")
            found = notification["params"]?["changed"]?.arrayValue?.isEmpty == false
        }
        let subscription = try #require(snapshot["result"]?["subscription"]?.stringValue)
        _ = try client.request(#"{"id":"u","method":"unlisten","params":{"subscription":"\#(subscription)"}}"#)
    }

    static let foreground = #"{"id":1,"method":"setAppState","params":{"state":"foreground"}}"#

    static func logImpression(_ key: String, _ client: RawClient) throws -> JSONValue? {
        try client.request(#"{"id":1,"method":"logImpression","params":{"key":"\#(key)"}}"#)?["result"]
    }

    static func postEvents(_ server: FakePushwooshServer) -> [RecordedRequest] {
        server.requests.filter { $0.apiMethod == "postEvent" }
    }

    @Test("R17: logImpression sends PW_FeatureFlagImpression with the exact body")
    func sendsTheExactEvent() async throws {
        let (rig, client) = try await Self.start()
        defer { rig.stop() }
        let server = rig.server
        let before = Int(Date().timeIntervalSince1970)
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "sent")
        let event = try #require(Self.postEvents(server).first)
        #expect(event.path == "/json/1.3/postEvent")
        let request = try #require(event.requestObject)
        #expect(request["application"] == "ABCDE-12345")
        #expect(request["hwid"] == "hwid-1")
        #expect(request["userId"] == "hwid-1")
        #expect(request["v"] == .string(PWFlagsVersion.current))
        #expect(request["event"] == "PW_FeatureFlagImpression")
        #expect(request["attributes"] == ["flag_key": "new_checkout", "rule_id": "r_1a2b3c4d", "enabled": true])
        let utc = try #require(request["timestampUTC"]?.integerValue)
        let current = try #require(request["timestampCurrent"]?.integerValue)
        #expect(utc >= before && utc <= Int(Date().timeIntervalSince1970))
        #expect(current - utc == TimeZone.current.secondsFromGMT())
        #expect(
            Set(request.keys) == [
                "application", "hwid", "userId", "v", "event", "attributes", "timestampUTC", "timestampCurrent",
            ])
    }

    @Test("R18: a repeat inside the session is a duplicate and sends nothing; an unknown key is noFlag")
    func repeatsAreNotSent() async throws {
        let (rig, client) = try await Self.start()
        defer { rig.stop() }
        let server = rig.server
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "sent")
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "duplicate")
        #expect(try Self.logImpression("nope", client)?["outcome"] == "noFlag")
        #expect(try Self.logImpression("New_Checkout", client)?["outcome"] == "noFlag")
        // A disabled flag is reported too: the disabled branch counts (R17).
        #expect(try Self.logImpression("banner", client)?["outcome"] == "sent")
        let events = Self.postEvents(server)
        #expect(events.count == 2)
        #expect(events.map { $0.requestObject?["attributes"]?["flag_key"] } == ["new_checkout", "banner"])
        let status = try #require(try client.request(#"{"id":9,"method":"status"}"#)?["result"])
        #expect(status["impressions"] == ["sent": 2, "duplicate": 1, "failed": 0, "logged": 0])
    }

    @Test("R18: a new rule or a new state of the flag is a new impression")
    func ruleOrStateChangeSendsAgain() async throws {
        let (rig, client) = try await Self.start(extra: "DisableThrottle=yes")
        defer { rig.stop() }
        let server = rig.server
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "sent")
        var moved = Self.checkout
        moved.ruleId = "r_99"
        server.enqueue(.flags([moved]), for: "getFeatureFlags")
        #expect(try client.request(#"{"id":2,"method":"refresh"}"#)?["result"]?["fromNetwork"] == true)
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "sent")
        var disabled = moved
        disabled.isEnabled = false
        server.enqueue(.flags([disabled]), for: "getFeatureFlags")
        #expect(try client.request(#"{"id":3,"method":"refresh"}"#)?["result"]?["fromNetwork"] == true)
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "sent")
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "duplicate")
        let attributes = Self.postEvents(server).compactMap { $0.requestObject?["attributes"] }
        #expect(
            attributes == [
                ["flag_key": "new_checkout", "rule_id": "r_1a2b3c4d", "enabled": true],
                ["flag_key": "new_checkout", "rule_id": "r_99", "enabled": true],
                ["flag_key": "new_checkout", "rule_id": "r_99", "enabled": false],
            ]
        )
    }

    @Test("R18: a new session (a user change) reports the impression again")
    func newSessionSendsAgain() async throws {
        let (rig, client) = try await Self.start()
        defer { rig.stop() }
        let server = rig.server
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "sent")
        #expect(
            try client.request(#"{"id":2,"method":"setUserId","params":{"userId":"alice"}}"#)?["result"]?["userId"]
                == "alice")
        try await Self.waitForFlag("new_checkout", client: client)
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "sent")
        let users = Self.postEvents(server).map { $0.requestObject?["userId"] }
        #expect(users == ["hwid-1", "alice"])
    }

    @Test(
        "R18: with Lifecycle=client, a session that starts after SessionTimeout reports again",
        .disabled(if: Sanitizer.isActive, "an LD_PRELOAD shim under a sanitizer's interceptors; run without one"))
    func clientSessionSendsAgain() async throws {
        let directory = try TemporaryDirectory()
        var suspend = try Suspend(in: directory)
        let (rig, client) = try await Self.start(
            extra: "SessionTimeout=300s", clientLifecycle: true, directory: directory,
            environment: suspend.environment)
        defer { rig.stop() }
        let (server, foreground) = (rig.server, Self.foreground)
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "sent")
        #expect(try client.request(#"{"id":2,"method":"setAppState","params":{"state":"background"}}"#) != nil)
        #expect(try client.request(foreground)?["result"]?["sessionStarted"] == false)
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "duplicate")
        #expect(try client.request(#"{"id":3,"method":"setAppState","params":{"state":"background"}}"#) != nil)
        // The rule is about time in the background: the device sleeps past SessionTimeout.
        try suspend.sleep(for: .seconds(301))
        #expect(try client.request(foreground)?["result"]?["sessionStarted"] == true)
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "sent")
        #expect(Self.postEvents(server).count == 2)
    }

    @Test("R8d, R18: with Lifecycle=client, a user change in the background reports the impression again")
    func backgroundUserChangeSendsAgain() async throws {
        let (rig, client) = try await Self.start(clientLifecycle: true)
        defer { rig.stop() }
        let server = rig.server
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "sent")
        #expect(try client.request(#"{"id":2,"method":"setAppState","params":{"state":"background"}}"#) != nil)
        // A user change in the background starts no session; the new user's impression is reported all the same.
        let change = #"{"id":3,"method":"setUserId","params":{"userId":"alice"}}"#
        #expect(try client.request(change)?["result"]?["userId"] == "alice")
        try await Self.waitForFlag("new_checkout", client: client)
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "sent")
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "duplicate")
        let users = Self.postEvents(server).map { $0.requestObject?["userId"] }
        #expect(users == ["hwid-1", "alice"])
    }

    @Test("F3: an impression's 429 with Retry-After holds the next impression and the next flag request")
    func impressionRetryAfterHoldsEverySend() async throws {
        let (rig, client) = try await Self.start(extra: "DisableThrottle=yes")
        defer { rig.stop() }
        let server = rig.server
        let flagRequests = server.requests.filter { $0.apiMethod == "getFeatureFlags" }.count
        server.enqueue(.retryAfter(429, value: "60"), for: "postEvent")
        #expect(try Self.logImpression("new_checkout", client) == ["outcome": "failed", "status": 429])
        #expect(try Self.logImpression("banner", client) == ["outcome": "failed", "status": 0])
        let refresh = try #require(try client.request(#"{"id":2,"method":"refresh"}"#))
        #expect(refresh["error"]?["data"]?["status"]?.integerValue == 0)
        let message = refresh["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains("Retry-After"), "\(refresh)")
        #expect(Self.postEvents(server).count == 1)
        #expect(server.requests.filter { $0.apiMethod == "getFeatureFlags" }.count == flagRequests)
    }

    @Test("F3: a flag request's 503 with Retry-After holds impressions too")
    func flagRetryAfterHoldsImpressions() async throws {
        let (rig, client) = try await Self.start(extra: "DisableThrottle=yes")
        defer { rig.stop() }
        let server = rig.server
        server.enqueue(.retryAfter(503, value: "60"), for: "getFeatureFlags")
        let refresh = try #require(try client.request(#"{"id":2,"method":"refresh"}"#))
        #expect(refresh["error"]?["data"]?["status"]?.integerValue == 503)
        #expect(try Self.logImpression("new_checkout", client) == ["outcome": "failed", "status": 0])
        #expect(Self.postEvents(server).isEmpty)
        #expect(rig.daemon.log.contains("Retry-After"))
    }

    @Test("R18: a failed send (HTTP 500, no reply) is not recorded, so the next call sends it again")
    func failedSendIsRetriedByTheNextCall() async throws {
        let (rig, client) = try await Self.start()
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        server.enqueue(.status(500, body: "oops"), for: "postEvent")
        let failed = try #require(try Self.logImpression("new_checkout", client))
        #expect(failed == ["outcome": "failed", "status": 500])
        server.enqueue(.drop, for: "postEvent")
        #expect(try Self.logImpression("new_checkout", client) == ["outcome": "failed", "status": 0])
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "sent")
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "duplicate")
        #expect(Self.postEvents(server).count == 3)
        let status = try #require(try client.request(#"{"id":9,"method":"status"}"#)?["result"])
        #expect(status["impressions"] == ["sent": 1, "duplicate": 1, "failed": 2, "logged": 0])
        #expect(daemon.log.contains("PWFLAGS_EVENT=impression-failed"))
    }

    @Test("R18: a refused connection fails with status 0 and stays unsent")
    func refusedConnectionFails() async throws {
        let (rig, client) = try await Self.start()
        defer { rig.stop() }
        let server = rig.server
        server.stop()
        #expect(try Self.logImpression("new_checkout", client) == ["outcome": "failed", "status": 0])
        #expect(try Self.logImpression("new_checkout", client) == ["outcome": "failed", "status": 0])
        // The stored flags are untouched by the failures.
        #expect(
            try client.request(#"{"id":5,"method":"get","params":{"key":"new_checkout"}}"#)?["result"]?["flag"]?["key"]
                == "new_checkout")
    }

    @Test("R18: concurrent calls for the same impression send one event")
    func concurrentCallsSendOnce() async throws {
        let (rig, first) = try await Self.start()
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        server.setDefaultReply(.delay(.milliseconds(300), then: .ok), for: "postEvent")
        let second = try RawClient(socketPath: daemon.socketPath)
        let line = #"{"id":1,"method":"logImpression","params":{"key":"new_checkout"}}"#
        try first.send(line: line)
        try second.send(line: line)
        let outcomes = [first.readJSON()?["result"]?["outcome"], second.readJSON()?["result"]?["outcome"]]
        #expect(outcomes.compactMap { $0?.stringValue }.sorted() == ["duplicate", "sent"])
        #expect(Self.postEvents(server).count == 1)
    }

    @Test("Impressions never wait behind a flag request that hangs")
    func impressionsDoNotWaitForRefresh() async throws {
        let (rig, client) = try await Self.start(extra: "DisableThrottle=yes")
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        server.enqueue(.hang, for: "getFeatureFlags")
        let refresher = try RawClient(socketPath: daemon.socketPath)
        try refresher.send(line: #"{"id":1,"method":"refresh"}"#)
        _ = try await server.waitForRequests(count: 2)
        let started = ContinuousClock.now
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "sent")
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test("With the local source an impression is logged as a structured entry, once per session")
    func localSourceLogsImpressions() throws {
        let directory = try TemporaryDirectory()
        try directory.write(
            "flags.json",
            #"{"flags":[{"key":"new_checkout","enabled":true,"rule_id":"r_1","properties":{}}]}"#
        )
        let daemon = try DaemonProcess(
            config: "[FeatureFlags]\nLocalFlagsFile=\(directory.file("flags.json"))\n",
            directory: directory
        )
        defer { daemon.cleanUp() }
        let client = try RawClient(socketPath: daemon.socketPath)
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "logged")
        #expect(try Self.logImpression("new_checkout", client)?["outcome"] == "duplicate")
        #expect(try Self.logImpression("other", client)?["outcome"] == "noFlag")
        #expect(daemon.log.contains("PWFLAGS_EVENT=impression FLAG_KEY=new_checkout RULE_ID=r_1 ENABLED=true"))
        // Counted as logged, as metrics' outcome="logged", never as sent: nothing reached Pushwoosh.
        let counts = try client.request(#"{"id":2,"method":"status"}"#)?["result"]?["impressions"]
        #expect(counts == ["duplicate": 1, "failed": 0, "logged": 1, "sent": 0], "\(String(describing: counts))")
    }
}

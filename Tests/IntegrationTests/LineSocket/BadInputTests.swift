import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Bad input and greedy clients, each answered as docs/protocol.md says, while the daemon keeps serving
/// everyone else.
@Suite(.hangLimit) struct BadInputTests {
    /// Checks that the daemon is up and that a fresh connection still gets answers.
    private func expectStillServing(_ daemon: DaemonProcess, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(daemon.isRunning, "pwflagsd exited; its log:\n\(daemon.log)", sourceLocation: sourceLocation)
        let response = try daemon.connect().call("get", ["key": "new_checkout"], id: "check")
        #expect(response?["id"] == "check", sourceLocation: sourceLocation)
        #expect(
            response?["result"]?["flag"] == Fixtures.wireValue(Fixtures.newCheckout), sourceLocation: sourceLocation)
    }

    @Test(arguments: ["hello", "{", #"{"id":1,"method":"get""#, "{'id':1}", "nul\u{0}l", #"{"id":01}"#])
    func aLineThatIsNotJSONIsAParseErrorAndTheConnectionStaysUsable(line: String) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let response = try #require(try client.request(line))
        #expect(response["jsonrpc"] == "2.0")
        #expect(response["id"] == .null)
        #expect(response["error"]?["code"] == -32700)
        #expect(response["error"]?["message"]?.stringValue != nil)
        #expect(try client.call("get", ["key": "dark_mode"], id: 2)?["result"]?["flag"]?["key"] == "dark_mode")
        try expectStillServing(daemon)
    }

    @Test(arguments: ["[]", "[1,2]", "42", #""get""#, "null", "true"])
    func jsonThatIsNotAnObjectIsAnInvalidRequest(line: String) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let response = try #require(try client.request(line))
        #expect(response["id"] == .null)
        #expect(response["error"]?["code"] == -32600)
        #expect(try client.call("status", id: 2)?["result"] != nil)
        try expectStillServing(daemon)
    }

    @Test func aBadJSONRPCVersionIsAnInvalidRequestEchoingTheId() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let response = try #require(try daemon.connect().request(#"{"jsonrpc":"1.0","id":"v","method":"status"}"#))
        #expect(response["id"] == "v")
        #expect(response["error"]?["code"] == -32600)
        try expectStillServing(daemon)
    }

    @Test(arguments: ["nope", "GET", "getall", "flagsChanged"])
    func anUnknownMethodIsMethodNotFound(method: String) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let response = try #require(try client.call(method, ["key": "new_checkout"], id: 77))
        #expect(response["id"] == 77)
        #expect(response["error"]?["code"] == -32601)
        try expectStillServing(daemon)
    }

    @Test(arguments: [
        (#"{"id":1,"method":"get","params":{"key":1}}"#, "key"),
        (#"{"id":1,"method":"get","params":{}}"#, "key"),
        (#"{"id":1,"method":"get"}"#, "key"),
        (#"{"id":1,"method":"get","params":[]}"#, "params"),
        (#"{"id":1,"method":"isEnabled","params":{"key":"a","default":"yes"}}"#, "default"),
        (#"{"id":1,"method":"listen","params":{"keys":"dark_mode"}}"#, "keys"),
        (#"{"id":1,"method":"listen","params":{"keys":[1]}}"#, "keys"),
        (#"{"id":1,"method":"unlisten","params":{"subscription":1}}"#, "subscription"),
        (#"{"id":1,"method":"logImpression","params":{"key":null}}"#, "key"),
        (#"{"id":1,"method":"setUserId","params":{"userId":false}}"#, "userId"),
        (#"{"id":1,"method":"setAppState","params":{"state":"sleeping"}}"#, "state"),
    ])
    func wrongParamsAreInvalidParamsNamingTheParam(line: String, param: String) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let response = try #require(try client.request(line))
        #expect(response["id"] == 1)
        #expect(response["error"]?["code"] == -32602)
        #expect(response["error"]?["data"]?["param"] == .string(param))
        #expect(try client.call("status", id: 2)?["result"] != nil)
        try expectStillServing(daemon)
    }

    @Test func aOneMebibyteLineIsTooLongAndClosesTheConnection() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let line = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20) + [UInt8(ascii: "\n")]
        // The daemon stops reading and closes mid-line, so the rest of the write may fail: that is expected.
        try? client.send(line)
        let response = try #require(client.readJSON())
        #expect(response["id"] == .null)
        #expect(response["error"]?["code"] == -32600)
        #expect(response["error"]?["message"]?.stringValue?.contains("line too long") == true)
        #expect(client.isClosedByPeer())
        try expectStillServing(daemon)
    }

    @Test func aLineJustUnderTheLimitIsAnswered() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let prefix = #"{"id":1,"method":"get","params":{"key":""#
        let suffix = #""}}"#
        let key = String(repeating: "k", count: 65536 - prefix.utf8.count - suffix.utf8.count)
        let response = try #require(try client.request(prefix + key + suffix))
        #expect(response["result"] == ["flag": nil])
    }

    @Test func binaryGarbageIsAnsweredWithErrorsAndTheConnectionStaysUsable() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        var generator = SystemRandomNumberGenerator()
        var garbage = (0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }
        garbage += [0, 0, 0xFF, 0xFE, 0xC3, 0x28, 0xED, 0xA0, 0x80, 0xF8, 0x88, 0x80, 0x80, 0x80]
        try client.send(garbage + [UInt8(ascii: "\n")])
        try client.send(line: #"{"id":"after","method":"get","params":{"key":"search_v2"}}"#)
        while true {
            let response = try #require(client.readJSON(), "no answer after the garbage; log:\n\(daemon.log)")
            if response["id"] == "after" {
                #expect(response["result"]?["flag"]?["key"] == "search_v2")
                break
            }
            let code = response["error"]?["code"]?.integerValue
            #expect(code == -32700 || code == -32600, "unexpected answer \(response)")
        }
        try expectStillServing(daemon)
    }

    @Test func aClientThatDisconnectsMidLineDoesNotDisturbTheDaemon() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        do {
            let client = try daemon.connect()
            _ = try client.call("listen")
            try client.send(Array(#"{"id":1,"method":"get","par"#.utf8))
        }
        do {
            let client = try daemon.connect()
            try client.send(Array(#"{"id":1,"method":"refresh"}"#.utf8) + [10])
        }
        try expectStillServing(daemon)
        try daemon.writeFlags(Fixtures.all.filter { $0.key != "search_v2" })
        let status = try #require(try daemon.connect().call("refresh")?["result"])
        #expect(status["revision"] == 2)
        try expectStillServing(daemon)
    }

    @Test func aClientThatShutsDownItsWritingSideStillGetsEveryAnswer() throws {
        // `echo REQUEST | socat - UNIX-CONNECT:…` (docs/protocol.md) sends its lines, shuts down its writing side,
        // and reads; the answers must arrive whole even when they do not fit in the socket buffer at once.
        let big = (0..<40).map { index in
            Flag(
                key: "big_\(index)", isEnabled: true, ruleId: "r",
                properties: ["blob": .string(String(repeating: "x", count: 20_000))])
        }
        let daemon = try DaemonProcess.serving(Fixtures.all + big)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let requests = [
            #"{"id":1,"method":"getAll"}"#, #"{"id":2,"method":"refresh"}"#,
            #"{"id":3,"method":"get","params":{"key":"dark_mode"}}"#,
        ]
        try client.send(Array(requests.joined(separator: "\n").utf8) + [10])
        #expect(shutdown(client.fd, Int32(SHUT_WR)) == 0)
        let all = try #require(client.readJSON(), "log:\n\(daemon.log)")
        #expect(all["id"] == 1)
        #expect(all["result"]?["flags"]?.arrayValue?.count == 45)
        #expect(client.readJSON()?["id"] == 2)
        #expect(client.readJSON()?["result"]?["flag"]?["key"] == "dark_mode")
        #expect(client.isClosedByPeer())
        try expectStillServing(daemon)
    }

    @Test func aNotificationGetsNoAnswer() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let notifications = [
            #"{"jsonrpc":"2.0","method":"get","params":{"key":"new_checkout"}}"#,
            #"{"method":"getAll"}"#, #"{"method":"status"}"#, #"{"method":"nope"}"#,
            #"{"method":"get","params":{"key":5}}"#, #"{"method":"listen"}"#,
            #"{"method":"setUserId","params":{"userId":"quiet"}}"#,
        ]
        for line in notifications { try client.send(line: line) }
        let response = try #require(try client.request(#"{"id":"last","method":"status"}"#))
        #expect(response["id"] == "last")
        // Notifications are carried out: the user id changed and the listen subscribed.
        #expect(response["result"]?["userId"] == "quiet")
        #expect(response["result"]?["subscriptions"] == 1)
    }

    @Test func connectionsPastMaxConnectionsAreClosedAtOnce() async throws {
        let daemon = try DaemonProcess.serving(Fixtures.all, extra: "[Daemon]\nMaxConnections=4\n")
        defer { daemon.cleanUp() }
        var clients = try (0..<4).map { _ in try daemon.connect() }
        // A connect returns once the kernel queued it: the daemon may not have accepted the last ones yet when the
        // first asks, so each waits for the daemon's own count.
        for (index, client) in clients.enumerated() {
            #expect(
                try await Eventually.wait {
                    try client.call("status", id: .number(Double(index)))?["result"]?["connections"] == 4
                })
        }
        let refused = try daemon.connect()
        #expect(refused.isClosedByPeer())
        for client in clients {
            #expect(try client.call("get", ["key": "dark_mode"])?["result"]?["flag"]?["key"] == "dark_mode")
        }
        clients.removeFirst()
        // Wait until the daemon has seen the close: its own count says so.
        #expect(try await Eventually.wait { try clients[0].call("status")?["result"]?["connections"] == 3 })
        let again = try daemon.connect()
        #expect(try again.call("get", ["key": "search_v2"])?["result"]?["flag"]?["key"] == "search_v2")
        #expect(daemon.isRunning)
    }

    @Test func aSubscriberThatNeverReadsIsDisconnectedAndOthersAreUnaffected() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all, extra: "[Daemon]\nMaxPendingBytes=65536\n")
        defer { daemon.cleanUp() }
        let sluggard = try daemon.connect()
        _ = try #require(try sluggard.call("listen")?["result"])
        let reader = try daemon.connect()
        _ = try #require(try reader.call("listen")?["result"])
        let observer = try daemon.connect()
        let big = String(repeating: "x", count: 200_000)
        var closed = false
        var revision = 1
        for round in 0..<30 where !closed {
            let flag = Flag(key: "big", isEnabled: true, ruleId: "r_\(round)", properties: ["blob": .string(big)])
            try daemon.writeFlags(Fixtures.all + [flag])
            let change = try reader.nextChange()
            #expect(change.revision > revision)
            revision = change.revision
            let status = try #require(try observer.call("status", id: .number(Double(round)))?["result"])
            closed = status["connections"] == 2
        }
        #expect(closed, "the subscriber that never reads was not disconnected")
        #expect(sluggard.isClosedByPeer())
        #expect(daemon.log.contains("does not read"))
        #expect(try reader.call("getAll")?["result"]?["revision"] == .number(Double(revision)))
        try expectStillServing(daemon)
    }

    @Test func listensPastMaxSubscriptionsAreRefused() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all, extra: "[Daemon]\nMaxSubscriptions=3\n")
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        var subscriptions: [JSONValue] = []
        for index in 0..<3 {
            subscriptions.append(
                try #require(try client.call("listen", id: .number(Double(index)))?["result"]?["subscription"]))
        }
        let refused = try #require(try client.call("listen", id: 10))
        #expect(refused["id"] == 10)
        #expect(refused["error"]?["code"] == -32002)
        // The limit is per connection: another connection may still listen.
        #expect(try daemon.connect().call("listen")?["result"]?["subscription"] != nil)
        #expect(try client.call("unlisten", ["subscription": subscriptions[0]], id: 11)?["result"] == [:])
        #expect(try client.call("listen", id: 12)?["result"]?["subscription"] != nil)
        try expectStillServing(daemon)
    }
}

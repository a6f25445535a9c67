import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every method (docs/protocol.md) over a real socket, against the real daemon serving a local flags file.
@Suite(.hangLimit) struct MethodTests {
    @Test func getReturnsTheStoredFlag() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let response = try #require(try client.call("get", ["key": "new_checkout"], id: "g1"))
        #expect(response["jsonrpc"] == "2.0")
        #expect(response["id"] == "g1")
        #expect(response["result"]?["flag"] == Fixtures.wireValue(Fixtures.newCheckout))
    }

    @Test func getOfAnAbsentKeyIsNull() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let response = try #require(try daemon.connect().call("get", ["key": "no_such_flag"], id: 9))
        #expect(response["id"] == 9)
        #expect(response["result"] == ["flag": nil])
    }

    @Test(arguments: [
        ("new_checkout", "r_1a2b3c4d"), ("New_Checkout", "r_upper"), ("NEW_CHECKOUT", nil), ("new_checkout ", nil),
    ])
    func getKeysAreCaseSensitive(key: String, ruleId: String?) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let response = try #require(try daemon.connect().call("get", ["key": .string(key)]))
        let flag = try #require(response["result"]?["flag"])
        if let ruleId {
            #expect(flag["key"] == .string(key))
            #expect(flag["ruleId"] == .string(ruleId))
        } else {
            #expect(flag == .null)
        }
    }

    @Test func getAllReturnsEveryFlagSortedByKeyWithTheRevision() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let result = try #require(try daemon.connect().call("getAll")?["result"])
        #expect(result["flags"] == Fixtures.wire(Fixtures.all))
        let keys = result["flags"]?.arrayValue?.compactMap { $0["key"]?.stringValue } ?? []
        #expect(keys == ["New_Checkout", "dark_mode", "holiday_banner", "new_checkout", "search_v2"])
        #expect(result["revision"] == 1)
    }

    @Test(arguments: [
        ("new_checkout", JSONValue?.none, true, true),
        ("dark_mode", JSONValue?.some(true), false, true),
        ("absent", JSONValue?.none, false, false),
        ("absent", JSONValue?.some(true), true, false),
        ("absent", JSONValue?.some(false), false, false),
    ])
    func isEnabledAnswersTheFlagOrTheDefault(key: String, fallback: JSONValue?, enabled: Bool, found: Bool) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        var params: [String: JSONValue] = ["key": .string(key)]
        params["default"] = fallback
        let result = try #require(try daemon.connect().call("isEnabled", .object(params))?["result"])
        #expect(result == ["enabled": .bool(enabled), "found": .bool(found)])
    }

    @Test func listenAnswersWithASnapshotOfEveryFlag() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let result = try #require(try daemon.connect().call("listen")?["result"])
        #expect(result["subscription"]?.stringValue?.isEmpty == false)
        #expect(result["revision"] == 1)
        #expect(result["flags"] == Fixtures.wire(Fixtures.all))
    }

    @Test func listenWithKeysAnswersWithThoseFlagsOnly() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let result = try #require(
            try client.call("listen", ["keys": ["dark_mode", "new_checkout", "absent"]])?["result"])
        #expect(result["flags"] == Fixtures.wire([Fixtures.darkMode, Fixtures.newCheckout]))
        let second = try #require(try client.call("listen", ["keys": []], id: 2)?["result"])
        #expect(second["flags"] == [])
        #expect(second["subscription"] != result["subscription"])
    }

    @Test func unlistenEndsNotifications() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let subscription = try #require(try client.call("listen")?["result"]?["subscription"])
        let other = try daemon.connect()
        _ = try #require(try other.call("listen")?["result"])
        #expect(try client.call("unlisten", ["subscription": subscription], id: 2)?["result"] == [:])
        try daemon.writeFlags([Fixtures.newCheckout])
        // The other subscriber is told; by then the daemon has fanned out the change to everyone.
        #expect(other.readNotification() != nil)
        // A notification for `client` would have been queued before this answer, in the same fan-out.
        try client.send(line: #"{"id":3,"method":"status"}"#)
        let next = try #require(client.readJSON())
        #expect(next["id"] == 3)
        #expect(next["result"]?["subscriptions"] == 1)
    }

    @Test(arguments: ["s999", "", "S1"])
    func unlistenOfAnUnknownSubscriptionIsInvalidParams(subscription: String) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        _ = try client.call("listen")
        let error = try #require(try client.call("unlisten", ["subscription": .string(subscription)], id: 2)?["error"])
        #expect(error["code"] == -32602)
        #expect(error["data"]?["param"] == "subscription")
    }

    @Test func aSubscriptionOfAnotherConnectionCannotBeEnded() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let owner = try daemon.connect()
        let subscription = try #require(try owner.call("listen")?["result"]?["subscription"])
        let error = try #require(try daemon.connect().call("unlisten", ["subscription": subscription])?["error"])
        #expect(error["code"] == -32602)
    }

    @Test func statusReportsTheFieldsOfPROTOCOL() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let status = try #require(try daemon.connect().call("status")?["result"]?.objectValue)
        let fields = [
            "version", "applicationCode", "source", "hwid", "userId", "flags", "revision", "fetchedAt", "stale",
            "partial",
            "lastError", "nextRefreshAt", "appState", "sessionStartedAt", "connections", "subscriptions", "problem",
        ]
        for field in fields { #expect(status[field] != nil, "status lacks \(field)") }
        #expect(status["source"] == "file")
        #expect(status["flags"] == 5)
        #expect(status["revision"] == 1)
        #expect(status["problem"] == .null)
        #expect(status["connections"] == 1)
        #expect(status["hwid"]?.stringValue?.isEmpty == false)
        #expect(status["userId"] == status["hwid"])
        #expect(status["fetchedAt"]?.stringValue != nil)
        #expect(status.keys.allSatisfy { !$0.lowercased().contains("token") })
    }

    @Test func refreshRereadsTheLocalFile() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        // Written in place, so the refresh (not only the watch) may be the one to read it: either way it is seen.
        try LocalFlags.text([Fixtures.darkMode]).write(toFile: daemon.flagsPath, atomically: false, encoding: .utf8)
        let result = try #require(try daemon.connect().call("refresh")?["result"])
        #expect(result["fromNetwork"] == false)
        #expect(result["flags"] == Fixtures.wire([Fixtures.darkMode]))
        #expect(result["revision"] == 2)
    }

    @Test func refreshOfAnUnchangedFileKeepsTheRevision() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let result = try #require(try daemon.connect().call("refresh")?["result"])
        #expect(result["fromNetwork"] == false)
        #expect(result["revision"] == 1)
        #expect(result["flags"] == Fixtures.wire(Fixtures.all))
    }

    /// One byte form per flag object: `refresh`, `getAll` and `listen` list the same bytes, and `get` shows each.
    @Test func refreshGetAllAndListenEncodeEveryFlagInTheSameBytes() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        try client.send(line: #"{"jsonrpc":"2.0","id":1,"method":"getAll"}"#)
        let getAll = try #require(client.readLine())
        try client.send(line: #"{"jsonrpc":"2.0","id":1,"method":"refresh"}"#)
        let refresh = try #require(client.readLine())
        try client.send(line: #"{"jsonrpc":"2.0","id":1,"method":"listen"}"#)
        let listen = try #require(client.readLine())
        let list = try #require(Self.flagList(in: getAll))
        let epoch = try #require(try JSONValue(parsing: Array(getAll.utf8))["result"]?["epoch"]?.stringValue)
        #expect(
            refresh
                == #"{"jsonrpc":"2.0","id":1,"result":{"epoch":"\#(epoch)","revision":1,"flags":\#(list),"fromNetwork":false}}"#
        )
        #expect(Self.flagList(in: listen) == list)
        var objects: [String] = []
        for flag in Fixtures.all.sorted(by: { $0.key < $1.key }) {
            try client.send(line: #"{"jsonrpc":"2.0","id":2,"method":"get","params":{"key":"\#(flag.key)"}}"#)
            let line = try #require(client.readLine())
            let prefix = #"{"jsonrpc":"2.0","id":2,"result":{"flag":"#
            #expect(line.hasPrefix(prefix) && line.hasSuffix("}}"))
            objects.append(String(line.dropFirst(prefix.count).dropLast(2)))
        }
        #expect("[" + objects.joined(separator: ",") + "]" == list)
        // The member order of every flag object: key, enabled, ruleId, properties.
        #expect(
            list.hasPrefix(
                #"[{"key":"New_Checkout","enabled":false,"ruleId":"r_upper","properties":{},"source":"file"}"#))
    }

    /// The `flags` array of a listing line: from `"flags":` to the `]` that closes it.
    static func flagList(in line: String) -> String? {
        guard let start = line.range(of: #","flags":"#)?.upperBound, let end = line.range(of: "]", options: .backwards)
        else { return nil }
        return String(line[start..<end.upperBound])
    }

    @Test(arguments: [
        ("new_checkout", "logged"), ("holiday_banner", "logged"), ("absent", "noFlag"), ("NEW_CHECKOUT", "noFlag"),
    ])
    func logImpressionOnTheLocalSource(key: String, outcome: String) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let result = try #require(try daemon.connect().call("logImpression", ["key": .string(key)])?["result"])
        #expect(result == ["outcome": .string(outcome)])
    }

    @Test func setUserIdAnswersTheUserIdAndEmptyGoesBackToTheHWID() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let hwid = try #require(try client.call("status")?["result"]?["hwid"])
        #expect(try client.call("setUserId", ["userId": "alice"], id: 2)?["result"] == ["userId": "alice"])
        #expect(try client.call("status", id: 3)?["result"]?["userId"] == "alice")
        #expect(try client.call("setUserId", ["userId": ""], id: 4)?["result"] == ["userId": hwid])
        #expect(try client.call("status", id: 5)?["result"]?["userId"] == hwid)
    }

    @Test func responsesComeInRequestOrderOnOneConnection() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let lines = [
            #"{"id":1,"method":"refresh"}"#, #"{"id":2,"method":"get","params":{"key":"dark_mode"}}"#,
            #"{"id":3,"method":"logImpression","params":{"key":"dark_mode"}}"#, #"{"id":4,"method":"status"}"#,
            #"{"id":5,"method":"setUserId","params":{"userId":"bob"}}"#, #"{"id":6,"method":"getAll"}"#,
        ]
        try client.send(Array(lines.joined(separator: "\n").utf8) + [10])
        for expected in 1...6 {
            #expect(client.readResponse()?["id"] == .number(Double(expected)))
        }
    }
}

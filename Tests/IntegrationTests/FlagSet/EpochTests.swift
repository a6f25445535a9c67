import FlagsCore
import Foundation
import TestSupport
import Testing

/// The epoch: a value every reply and notification with a revision carries, new at each daemon start, so that a
/// client can resume a change stream with `listen`'s `since` instead of taking the whole listing again.
@Suite(.hangLimit) struct EpochTests {
    /// The epoch of a result or notification params; fails the test when it is not 32 lowercase hex digits.
    static func epoch(_ value: JSONValue?) throws -> String {
        let epoch = try #require(value?["epoch"]?.stringValue)
        #expect(epoch.count == 32 && epoch.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "epoch \(epoch)")
        return epoch
    }

    @Test("status, getAll, refresh, listen and flagsChanged carry the same epoch")
    func everyRevisionCarriesTheEpoch() throws {
        let daemon = try DaemonProcess.serving([Fixtures.checkout])
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let status = try Self.epoch(try client.call("status")?["result"])
        #expect(try Self.epoch(try client.call("getAll")?["result"]) == status)
        // The fast scanner answers this spelling of getAll.
        #expect(try Self.epoch(try client.request(#"{"id":7,"method":"getAll"}"#)?["result"]) == status)
        #expect(try Self.epoch(try client.call("refresh")?["result"]) == status)
        let listener = try daemon.connect()
        #expect(try Self.epoch(try listener.call("listen")?["result"]) == status)
        let chosen = try daemon.connect()
        #expect(try Self.epoch(try chosen.call("listen", ["keys": ["banner"]])?["result"]) == status)

        try daemon.writeFlags([Fixtures.checkout, Fixtures.banner])
        #expect(try Self.epoch(listener.readNotification()) == status)
        #expect(try Self.epoch(chosen.readNotification()) == status)
    }

    @Test("The epoch stays the same across a reload and changes when the daemon restarts")
    func epochChangesOnlyAtStart() throws {
        let daemon = try DaemonProcess.serving([Fixtures.checkout])
        defer { daemon.directory.remove() }
        let first = try Self.epoch(try daemon.connect().call("status")?["result"])
        #expect(try daemon.connect().call("reload")?["result"] == [:])
        #expect(try Self.epoch(try daemon.connect().call("status")?["result"]) == first)

        let restarted = try daemon.restarted()
        defer { _ = restarted.stop() }
        let second = try Self.epoch(try restarted.connect().call("getAll")?["result"])
        #expect(second != first)
    }

    @Test(
        "listen with the epoch and revision the daemon is at answers unchanged, and the subscription hears later changes"
    )
    func listenSinceTheCurrentRevisionIsUnchanged() throws {
        let daemon = try DaemonProcess.serving([Fixtures.checkout])
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let listing = try #require(try client.call("getAll")?["result"])
        let since: JSONValue = ["epoch": listing["epoch"] ?? .null, "revision": listing["revision"] ?? .null]

        let result = try #require(try client.call("listen", ["since": since])?["result"])
        #expect(result["unchanged"] == true)
        #expect(result["flags"] == nil)
        #expect(result["subscription"]?.stringValue?.isEmpty == false)
        #expect(result["revision"] == listing["revision"])
        #expect(result["epoch"] == listing["epoch"])
        #expect(result["expiresAt"] == .null)
        let chosen = try #require(
            try client.call("listen", ["keys": ["new_checkout"], "since": since], id: 2)?["result"])
        #expect(chosen["unchanged"] == true)

        try daemon.writeFlags([Fixtures.banner])
        let change = try #require(client.readNotification())
        #expect(change["revision"] == 2)
        #expect(change["changed"] == [Fixtures.wireValue(Fixtures.banner)])
    }

    @Test(
        "listen with an older revision or another epoch answers the whole listing",
        arguments: [("same epoch, older revision", 0), ("same epoch, newer revision", 9), ("other epoch", 1)])
    func listenSinceAnotherPointSendsTheListing(_ label: String, revision: Int) throws {
        let daemon = try DaemonProcess.serving([Fixtures.checkout])
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let current = try Self.epoch(try client.call("status")?["result"])
        let epoch = label == "other epoch" ? String(repeating: "0", count: 32) : current
        let since: JSONValue = ["epoch": .string(epoch), "revision": .number(Double(revision))]
        let result = try #require(try client.call("listen", ["since": since])?["result"])
        #expect(result["unchanged"] == nil)
        #expect(result["flags"] == Fixtures.wire([Fixtures.checkout]))
        #expect(result["revision"] == 1)
        #expect(result["epoch"] == .string(current))
    }

    @Test(
        "A since that is not an object with a string epoch and an integer revision is refused as invalid params",
        arguments: [
            JSONValue.string("x"), ["epoch": "e"], ["revision": 1], ["epoch": 1, "revision": 1],
            ["epoch": "e", "revision": 1.5], ["epoch": "e", "revision": "1"],
        ])
    func malformedSinceIsRefused(_ since: JSONValue) throws {
        let daemon = try DaemonProcess.serving([Fixtures.checkout])
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let error = try #require(try client.call("listen", ["since": since])?["error"])
        #expect(error["code"] == -32602)
        #expect(error["data"]?["param"] == "since")
        #expect(try client.call("status")?["result"]?["subscriptions"] == 0)
    }
}

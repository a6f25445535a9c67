import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing

/// `Listen` with `more`: the snapshot first, then one reply with `continues` per change of its keys, under the
/// line socket's rules (R9, resuming with `since`, across restarts too).
@Suite(.hangLimit) struct VarlinkListenTests {
    @Test func streamsTheSnapshotThenEachChangeOfItsKeysOnly() async throws {
        let rig = try VarlinkRig()
        defer { rig.cleanUp() }
        let client = try rig.connect()
        try client.send("Listen", ["keys": ["dark_mode"]], more: true)
        let first = try #require(client.reply())
        #expect(first["continues"] == true)
        #expect(first["parameters"]?["flags"] == Fixtures.wire([Fixtures.darkMode]))
        #expect(first["parameters"]?["revision"] == 1)
        // A change of another key reaches nobody (R9); the next reply is the change of dark_mode.
        var banner = Fixtures.searchV2
        banner.ruleId = "r_other"
        try rig.daemon.writeFlags([Fixtures.newCheckout, banner, Fixtures.darkMode, Fixtures.holidayBanner])
        var dark = Fixtures.darkMode
        dark.isEnabled = true
        #expect(try await Eventually.wait { try rig.connect().call("GetAll")?["parameters"]?["revision"] == 2 })
        try rig.daemon.writeFlags([Fixtures.newCheckout, banner, dark, Fixtures.holidayBanner])
        let change = try #require(client.reply())
        #expect(change["continues"] == true)
        #expect(change["parameters"]?["revision"] == 3)
        #expect(change["parameters"]?["changed"] == Fixtures.wire([dark]))
        #expect(change["parameters"]?["removed"] == [])
        #expect(change["parameters"]?["expiresAt"] == .null)
        try rig.daemon.writeFlags([Fixtures.newCheckout, banner, Fixtures.holidayBanner])
        #expect(client.reply()?["parameters"]?["removed"] == ["dark_mode"])
    }

    @Test func sinceWhereTheDaemonStandsIsUnchangedAndAnotherEpochGetsTheListing() throws {
        let rig = try VarlinkRig()
        defer { rig.cleanUp() }
        let epoch = try #require(try rig.connect().call("GetAll")?["parameters"]?["epoch"]?.stringValue)
        let resumed = try rig.connect()
        try resumed.send("Listen", ["since": ["epoch": .string(epoch), "revision": 1]], more: true)
        let unchanged = try #require(resumed.reply())
        #expect(unchanged["parameters"]?["unchanged"] == true)
        #expect(unchanged["parameters"]?["flags"] == nil)
        // A restart: the old position belongs to another epoch, so the whole listing comes, and changes follow.
        let restarted = try rig.daemon.restarted(varlink: rig.socketPath)
        defer { restarted.cleanUp() }
        #expect(resumed.isClosedByPeer())
        let again = try VarlinkClient(socketPath: rig.socketPath)
        try again.send("Listen", ["since": ["epoch": .string(epoch), "revision": 1]], more: true)
        let listing = try #require(again.reply())
        #expect(listing["parameters"]?["flags"] == Fixtures.wire(Fixtures.all))
        #expect(listing["parameters"]?["epoch"] != .string(epoch))
        try restarted.writeFlags([Fixtures.newCheckout])
        #expect(again.reply()?["parameters"]?["changed"] == [])
    }

    @Test func listenKeysPastMaxListenKeysAreRefused() throws {
        let rig = try VarlinkRig(extra: "[Daemon]\nMaxListenKeys=2\n")
        defer { rig.cleanUp() }
        let client = try rig.connect()
        try client.send("Listen", ["keys": ["a", "b", "c"]], more: true)
        let refused = try #require(client.reply())
        #expect(refused["error"] == "io.github.pwflagsd.Flags.TooManyListenKeys")
        #expect(refused["parameters"] == ["limit": 2, "held": 0, "requested": 3])
    }

    @Test func aCallOnAStreamingConnectionEndsTheListenThenIsAnswered() throws {
        let rig = try VarlinkRig(extra: "[Daemon]\nMaxListenKeys=2\n")
        defer { rig.cleanUp() }
        let client = try rig.connect()
        try client.send("Listen", ["keys": ["dark_mode", "search_v2"]], more: true)
        #expect(try #require(client.reply())["continues"] == true)
        try client.send("GetStatus")
        let ended = try #require(client.reply())
        #expect(ended["error"] == "io.github.pwflagsd.Flags.ListenInterrupted")
        #expect(ended["continues"] == nil)
        let status = try #require(client.reply())
        #expect(status["parameters"]?["subscriptions"] == 0, "the ended Listen no longer counts: \(status)")
        // Its keys are free again: a new Listen of two keys on the same connection fits MaxListenKeys=2.
        try client.send("Listen", ["keys": ["dark_mode", "new_checkout"]], more: true)
        #expect(try #require(client.reply())["parameters"]?["flags"] != nil)
        try rig.daemon.writeFlags(Fixtures.all.filter { $0.key != "dark_mode" })
        #expect(client.reply()?["parameters"]?["removed"] == ["dark_mode"])
    }
}

extension DaemonProcess {
    /// Stops this daemon and starts another on the same flags, state and sockets, Varlink included.
    func restarted(varlink socketPath: String) throws -> DaemonProcess {
        _ = stop()
        return try DaemonProcess(
            config: LocalFlags.config(in: directory, extra: "[Varlink]\nSocketPath=\(socketPath)\n"),
            directory: directory)
    }
}

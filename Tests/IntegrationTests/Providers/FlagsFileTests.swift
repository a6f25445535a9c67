import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The local flags file as a source: edits reach listeners (R9), invalid files keep the last good flags.
@Suite(.hangLimit) struct FlagsFileTests {
    /// Applies a `flagsChanged` to a snapshot the way docs/protocol.md says a client should.
    private func apply(_ change: FlagsChanged, to flags: inout [String: Flag]) {
        for flag in change.changed { flags[flag.key] = flag }
        for key in change.removed { flags[key] = nil }
    }

    @Test func listenSeesAnEditOfTheFlagsFile() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let listener = try daemon.connect()
        let snapshot = try listener.listing("listen")
        let subscription = try #require(snapshot.subscription)

        var changedCheckout = Fixtures.newCheckout
        changedCheckout.properties["button_color"] = "red"
        var enabledDarkMode = Fixtures.darkMode
        enabledDarkMode.isEnabled = true
        let added = Flag(key: "brand_new", isEnabled: true, ruleId: "r_new", properties: ["n": 1.5])
        let edited = [changedCheckout, enabledDarkMode, Fixtures.searchV2, added]
        try daemon.writeFlags(edited)

        let params = try #require(listener.readNotification())
        let change = try #require(FlagsChanged(params: params))
        #expect(change.subscription == subscription)
        #expect(change.revision > snapshot.revision)
        #expect(change.changed.map(\.key) == ["brand_new", "dark_mode", "new_checkout"])
        #expect(Set(change.removed) == ["holiday_banner", "New_Checkout"])

        var flags = Dictionary(uniqueKeysWithValues: snapshot.flags.map { ($0.key, $0) })
        apply(change, to: &flags)
        let all = try daemon.connect().listing("getAll")
        #expect(flags.values.sorted { $0.key < $1.key } == all.flags)
        #expect(all.revision == change.revision)
    }

    @Test func listenWithKeysHearsOnlyOfThoseKeys() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let listener = try daemon.connect()
        _ = try #require(try listener.call("listen", ["keys": ["dark_mode"]])?["result"])
        let everything = try daemon.connect()
        _ = try #require(try everything.call("listen")?["result"])
        // First a change that does not touch dark_mode, then one that does: only the second is heard.
        try daemon.writeFlags(Fixtures.all.filter { $0.key != "search_v2" })
        #expect(try everything.nextChange().removed == ["search_v2"])
        var darkOn = Fixtures.darkMode
        darkOn.isEnabled = true
        darkOn.source = .file
        try daemon.writeFlags(Fixtures.all.filter { $0.key != "search_v2" && $0.key != "dark_mode" } + [darkOn])
        let change = try listener.nextChange()
        #expect(change.changed == [darkOn])
        #expect(change.removed.isEmpty)
        #expect(change.revision == 3)
    }

    @Test func anIdenticalRewriteNotifiesNobody() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let listener = try daemon.connect()
        let start = try #require(try listener.call("listen")?["result"]?["revision"]?.integerValue)
        try daemon.writeFlags(Fixtures.all.reversed())
        // refresh re-reads the file at once, so the identical content has surely been read before the change.
        #expect(try daemon.connect().call("refresh")?["result"]?["revision"]?.integerValue == start)
        try daemon.writeFlags(Fixtures.all)
        #expect(try daemon.connect().call("refresh")?["result"]?["revision"]?.integerValue == start)
        // A real change after the identical rewrites: the first notification must be this one (R9).
        try daemon.writeFlags(Fixtures.all.filter { $0.key != "dark_mode" })
        let change = try listener.nextChange()
        #expect(change.removed == ["dark_mode"])
        #expect(change.changed.isEmpty)
        #expect(change.revision == start + 1)
    }

    @Test(arguments: [
        "{ not json", #"{"flags":"nope"}"#, #"{"flags":[{"key":1}]}"#, "", #"{"flags":[],"partial":"maybe"}"#,
    ])
    func anInvalidFileKeepsTheLastGoodFlags(text: String) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        try daemon.writeFlagsFile(text)
        // A refresh reads the file now, whatever the watcher has done so far.
        let error = try #require(try client.call("refresh")?["error"])
        #expect(error["code"] == -32000)
        #expect(error["data"]?["domain"] == "PWFeatureFlagsErrorDomain")
        let status = try #require(try client.call("status", id: 2)?["result"])
        let problem = try #require(status["problem"]?.stringValue)
        #expect(problem.contains(daemon.flagsPath))
        #expect(status["flags"] == 5)
        #expect(status["revision"] == 1)
        let flag = try #require(try client.call("get", ["key": "new_checkout"], id: 3)?["result"]?["flag"])
        #expect(flag == Fixtures.wireValue(Fixtures.newCheckout))
        #expect(daemon.isRunning)
    }

    @Test func aFixedFileClearsTheProblem() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let listener = try daemon.connect()
        _ = try listener.call("listen")
        try daemon.writeFlagsFile("[broken")
        try daemon.writeFlags([Fixtures.searchV2])
        _ = try #require(listener.readNotification())
        let status = try #require(try daemon.connect().call("status")?["result"])
        #expect(status["problem"] == .null)
        #expect(status["flags"] == 1)
    }

    @Test func aMissingFileAtStartServesNoFlagsAndSaysWhy() throws {
        let daemon = try DaemonProcess.serving(nil)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        #expect(try client.call("get", ["key": "new_checkout"])?["result"] == ["flag": nil])
        #expect(
            try client.call("isEnabled", ["key": "new_checkout", "default": true], id: 2)?["result"]?["enabled"] == true
        )
        let status = try #require(try client.call("status", id: 3)?["result"])
        #expect(status["flags"] == 0)
        #expect(status["problem"]?.stringValue?.contains(daemon.flagsPath) == true)
    }

    @Test func aFileThatAppearsLaterIsServed() throws {
        let daemon = try DaemonProcess.serving(nil)
        defer { daemon.cleanUp() }
        let listener = try daemon.connect()
        _ = try listener.call("listen")
        try daemon.writeFlags([Fixtures.darkMode])
        let change = try listener.nextChange()
        var served = Fixtures.darkMode
        served.source = .file
        #expect(change.changed == [served])
        #expect(change.revision == 1)
    }

    @Test("A LocalFlagsFile that is a FIFO nobody writes to holds neither a reload nor the stop")
    func fifoAsTheFlagsFileHoldsNothing() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let fifo = daemon.directory.file("fifo.json")
        try #require(mkfifo(fifo, 0o600) == 0)
        // Held open for writing by the test, silent: a blocking read of the file would wait for ever.
        let writer = open(fifo, O_RDWR | O_CLOEXEC)
        try #require(writer >= 0)
        defer { close(writer) }
        try Data("[FeatureFlags]\nLocalFlagsFile=\(fifo)\n".utf8).write(to: URL(fileURLWithPath: daemon.configPath))
        let reload = try daemon.connect().call("reload", timeout: .seconds(10))
        #expect(reload?["result"] != nil, "reload answered \(String(describing: reload))")
        let status = try daemon.connect().call("status")?["result"]
        #expect(status?["problem"]?.stringValue?.isEmpty == false, "status: \(String(describing: status))")
        #expect(daemon.stop() == 0, "the daemon stops on SIGTERM")
    }
}

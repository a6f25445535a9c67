import FeatureFlags
import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Local overrides on the real daemon: set, clear and list over the socket, layered on the local file and on
/// Pushwoosh, kept across restarts, reloads and user changes, heard by listeners, never reported as impressions.
@Suite(.hangLimit) struct OverrideTests {
    static let forceDark: JSONValue = ["key": "dark_mode", "enabled": true, "properties": ["theme": "dark"]]

    /// The flag object the daemon serves for `dark_mode` while `forceDark` is set over the local file.
    static let darkOverridden: JSONValue = [
        "key": "dark_mode", "enabled": true, "ruleId": "override", "properties": ["theme": "dark"],
        "source": "override",
        "sourceValue": ["enabled": false, "ruleId": "r_5e6f7a8b", "properties": ["theme": "light"], "source": "file"],
    ]

    @Test("setOverride forces a flag over the local file, get and listOverrides show it, clearOverride puts it back")
    func setListClearOverTheSocket() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try session.get("dark_mode")?["source"] == "file")
        #expect(try session.result("setOverride", Self.forceDark) == ["flag": Self.darkOverridden])
        #expect(try session.get("dark_mode") == Self.darkOverridden)
        let listed = try session.result("listOverrides")
        #expect(listed == ["overrides": [["key": "dark_mode", "enabled": true, "properties": ["theme": "dark"]]]])
        // Other flags are untouched, and still say where they come from.
        #expect(try session.get("new_checkout")?["source"] == "file")
        #expect(try session.get("new_checkout")?["sourceValue"] == nil)
        #expect(try session.result("clearOverride", ["key": "dark_mode"]) == ["cleared": ["dark_mode"]])
        #expect(try session.get("dark_mode") == Fixtures.wireValue(Fixtures.darkMode, source: "file"))
        #expect(try session.result("clearOverride", ["key": "dark_mode"]) == ["cleared": []])
        #expect(try session.result("listOverrides") == ["overrides": []])
    }

    @Test("An override of a key the source lacks adds that flag, with a null sourceValue, until it is cleared")
    func overrideOfAnAbsentKeyAddsTheFlag() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        let set = try session.result("setOverride", ["key": "qa_only", "properties": ["level": 3]])
        let added: JSONValue = [
            "key": "qa_only", "enabled": false, "ruleId": "override", "properties": ["level": 3], "source": "override",
            "sourceValue": .null,
        ]
        #expect(set == ["flag": added])
        #expect(try session.keys().contains("qa_only"))
        #expect(
            try session.result("isEnabled", ["key": "qa_only", "default": true]) == ["enabled": false, "found": true])
        #expect(try session.result("clearOverride", ["all": true]) == ["cleared": ["qa_only"]])
        #expect(try session.get("qa_only") == .null)
    }

    @Test("Listeners hear an override and its removal; setting the same override again notifies no one (R9)")
    func listenersHearSetAndClear() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let listener = try daemon.connect()
        let snapshot = try #require(try listener.call("listen", ["keys": ["dark_mode"]])?["result"])
        let start = try #require(snapshot["revision"]?.integerValue)
        let control = try SocketSession(socketPath: daemon.socketPath)
        _ = try control.result("setOverride", Self.forceDark)
        let set = try #require(listener.readNotification())
        #expect(set["changed"] == [Self.darkOverridden])
        #expect(set["revision"]?.integerValue == start + 1)
        // The same override again changes nothing visible: no event, no new revision.
        _ = try control.result("setOverride", Self.forceDark)
        #expect(try control.result("getAll")?["revision"]?.integerValue == start + 1)
        _ = try control.result("clearOverride", ["key": "dark_mode"])
        let cleared = try #require(listener.readNotification())
        #expect(cleared["revision"]?.integerValue == start + 2)
        #expect(cleared["changed"] == [Fixtures.wireValue(Fixtures.darkMode, source: "file")])
    }

    @Test("An override sits on top of Pushwoosh; a new response changes its sourceValue, never its value")
    func layersOnPushwoosh() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["DisableThrottle": "yes"])
        defer { rig.stop() }
        let session = try SocketSession(socketPath: rig.daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(try session.get("new_checkout")?["source"] == "pushwoosh")
        _ = try session.result("setOverride", ["key": "new_checkout", "enabled": false])
        let flag = try #require(try session.get("new_checkout"))
        #expect(flag["enabled"] == false)
        #expect(flag["properties"] == .object(Fixtures.checkout.properties))
        #expect(flag["sourceValue"]?["source"] == "pushwoosh")
        #expect(flag["sourceValue"]?["enabled"] == true)
        #expect(flag["sourceValue"]?["ruleId"] == .string(Fixtures.checkout.ruleId))
        var moved = Fixtures.checkout
        moved.ruleId = "r_moved"
        rig.server.setDefaultReply(.flags([moved]), for: "getFeatureFlags")
        #expect(try session.result("refresh")?["fromNetwork"] == true)
        let after = try #require(try session.get("new_checkout"))
        #expect(after["enabled"] == false)
        #expect(after["ruleId"] == "override")
        #expect(after["sourceValue"]?["ruleId"] == "r_moved")
    }

    @Test("The client library's mirror shows the override, its source and the source's own value")
    func clientLibrarySeesTheOverride() async throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let flags = FeatureFlags(socketPath: daemon.socketPath)
        defer { flags.stop() }
        #expect(await flags.waitForFirstSnapshot(timeout: .seconds(15)))
        #expect(flags.get("dark_mode")?.source == .file)
        _ = try SocketSession(socketPath: daemon.socketPath).result("setOverride", Self.forceDark)
        #expect(await flags.waitUntil { $0.get("dark_mode")?.isOverridden == true })
        let flag = try #require(flags.get("dark_mode"))
        #expect(flag.isEnabled && flag.string(forProperty: "theme", default: nil) == "dark")
        #expect(flag.sourceValue?.string(forProperty: "theme", default: nil) == "light")
        #expect(flag.sourceValue?.source == .file)
    }

    @Test("Overrides survive a restart: kept in the state directory, served from the first request")
    func survivesARestart() throws {
        let first = try DaemonProcess.serving(Fixtures.all)
        _ = try SocketSession(socketPath: first.socketPath).result("setOverride", Self.forceDark)
        let file = first.directory.file("state/overrides.json")
        #expect(FileManager.default.fileExists(atPath: file))
        #expect(first.stop() == 0)
        let second = try DaemonProcess(config: LocalFlags.config(in: first.directory), directory: first.directory)
        defer { second.cleanUp() }
        let session = try SocketSession(socketPath: second.socketPath)
        #expect(try session.get("dark_mode") == Self.darkOverridden)
        // systemctl status says it from the start.
        let ready = second.notify.received.first { $0.contains("READY=1") }
        #expect(ready?.contains("; 1 overridden on this device") == true, "\(String(describing: ready))")
        _ = try session.result("clearOverride", ["all": true])
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test("A corrupt overrides file is logged and ignored: the daemon starts and serves its source")
    func corruptFileIsIgnored() throws {
        let first = try DaemonProcess.serving(Fixtures.all)
        #expect(first.stop() == 0)
        try Data("{\"overrides\":[{\"key\":".utf8).write(
            to: URL(fileURLWithPath: first.directory.file("state/overrides.json")))
        let second = try DaemonProcess(config: LocalFlags.config(in: first.directory), directory: first.directory)
        defer { second.cleanUp() }
        let session = try SocketSession(socketPath: second.socketPath)
        #expect(try session.get("dark_mode") == Fixtures.wireValue(Fixtures.darkMode, source: "file"))
        #expect(try session.result("listOverrides") == ["overrides": []])
        #expect(second.log.contains("ignored the overrides file"))
        // The next change writes a good file again.
        _ = try session.result("setOverride", Self.forceDark)
        let text = try String(contentsOfFile: second.directory.file("state/overrides.json"), encoding: .utf8)
        #expect(try JSONValue(parsing: text)["overrides"]?.arrayValue?.count == 1)
    }

    @Test(
        "A state directory that cannot take the overrides file: the override holds until the stop, the log says why",
        .enabled(if: TmpfsMount.isAvailable, "needs root to mount a tmpfs"))
    func readOnlyStateDirectory() throws {
        let directory = try TemporaryDirectory()
        let mount = try TmpfsMount(at: directory.file("state"), size: "1m")
        try directory.write(LocalFlags.fileName, LocalFlags.text(Fixtures.all))
        var daemon: DaemonProcess?
        defer {
            daemon?.stop()
            mount.unmount()
            directory.remove()
        }
        let started = try DaemonProcess(config: LocalFlags.config(in: directory), directory: directory)
        daemon = started
        try mount.remountReadOnly()
        let session = try SocketSession(socketPath: started.socketPath)
        #expect(try session.result("setOverride", Self.forceDark) == ["flag": Self.darkOverridden])
        #expect(try session.get("dark_mode") == Self.darkOverridden)
        #expect(started.log.contains("cannot save the overrides; they hold until the daemon stops"), "\(started.log)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("state/overrides.json")))
    }

    @Test("A user change and a reload that swaps the source keep the overrides")
    func survivesAUserChangeAndAReload() async throws {
        let rig = try PushwooshRig.start()
        defer { rig.stop() }
        let session = try SocketSession(socketPath: rig.daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        _ = try session.result("setOverride", ["key": "new_checkout", "properties": ["color": "red"]])
        #expect(try session.result("setUserId", ["userId": "bob"]) == ["userId": "bob"])
        let afterUser = try #require(try session.get("new_checkout"))
        #expect(afterUser["source"] == "override")
        #expect(afterUser["properties"]?["color"] == "red")
        try ReloadTests.edit(rig.daemon, replacing: "ABCDE-12345", with: "FGHIJ-67890")
        #expect(try session.result("reload") == [:])
        let afterReload = try #require(try session.get("new_checkout"))
        #expect(afterReload["source"] == "override")
        #expect(afterReload["properties"]?["color"] == "red")
        #expect(try session.result("listOverrides")?["overrides"]?.arrayValue?.count == 1)
    }

    @Test("logImpression of an overridden flag answers overridden and sends nothing; cleared, it is sent")
    func overriddenImpressionIsNotSent() async throws {
        let (rig, client) = try await ImpressionTests.start()
        defer { rig.stop() }
        let set = #"{"id":2,"method":"setOverride","params":{"key":"new_checkout","enabled":false}}"#
        #expect(try client.request(set)?["result"]?["flag"]?["source"] == "override")
        #expect(try ImpressionTests.logImpression("new_checkout", client) == ["outcome": "overridden"])
        let status = try #require(try client.request(#"{"id":3,"method":"status"}"#)?["result"])
        #expect(ImpressionTests.postEvents(rig.server).isEmpty)
        #expect(status["impressions"] == ["sent": 0, "duplicate": 0, "failed": 0, "logged": 0])
        _ = try client.request(#"{"id":4,"method":"clearOverride","params":{"key":"new_checkout"}}"#)
        #expect(try ImpressionTests.logImpression("new_checkout", client) == ["outcome": "sent"])
        let events = ImpressionTests.postEvents(rig.server)
        #expect(events.map { $0.requestObject?["attributes"]?["enabled"] } == [true])
    }

    @Test(
        "Bad override params are -32602 naming the param, and change nothing",
        arguments: [
            (#"{}"#, "key"), (#"{"key":7}"#, "key"), (#"{"key":""}"#, "key"),
            (#"{"key":"k","enabled":"yes"}"#, "enabled"), (#"{"key":"k","properties":[1]}"#, "properties"),
        ])
    func badSetParams(params: String, param: String) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let answer = try #require(try client.request(#"{"id":1,"method":"setOverride","params":\#(params)}"#))
        #expect(answer["error"]?["code"] == -32602, "\(answer)")
        #expect(answer["error"]?["data"]?["param"] == .string(param), "\(answer)")
        for clear in [#"{}"#, #"{"key":"k","all":true}"#, #"{"all":"yes"}"#, #"{"key":1}"#] {
            let refused = try client.request(#"{"id":2,"method":"clearOverride","params":\#(clear)}"#)
            #expect(refused?["error"]?["code"] == -32602, "\(clear): \(String(describing: refused))")
        }
        #expect(try client.request(#"{"id":3,"method":"listOverrides"}"#)?["result"] == ["overrides": []])
        #expect(daemon.isRunning)
    }
}

import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing

/// The real daemon's Varlink socket: introspection, each method's reply, and the errors of the IDL.
@Suite(.hangLimit) struct VarlinkMethodTests {
    @Test func introspectionListsBothInterfacesAndServesTheShippedIDL() throws {
        let rig = try VarlinkRig()
        defer { rig.cleanUp() }
        let client = try rig.connect()
        let info = try #require(try client.call("org.varlink.service.GetInfo"))
        #expect(info["parameters"]?["interfaces"] == ["org.varlink.service", "io.github.pwflagsd.Flags"])
        #expect(info["parameters"]?["version"]?.stringValue == PWFlagsVersion.current)
        let described = try client.call(
            "org.varlink.service.GetInterfaceDescription", ["interface": "io.github.pwflagsd.Flags"])
        let shipped = try String(
            contentsOfFile: Repository.path("systemd/io.github.pwflagsd.Flags.varlink"), encoding: .utf8)
        #expect(described?["parameters"]?["description"]?.stringValue == shipped)
        let unknown = try client.call("org.varlink.service.GetInterfaceDescription", ["interface": "org.example.X"])
        #expect(unknown?["error"] == "org.varlink.service.InterfaceNotFound")
        #expect(try client.call("org.example.X.Y")?["error"] == "org.varlink.service.InterfaceNotFound")
        let missing = try client.call("NoSuchMethod")
        #expect(missing?["error"] == "org.varlink.service.MethodNotFound")
        #expect(missing?["parameters"]?["method"] == "io.github.pwflagsd.Flags.NoSuchMethod")
    }

    @Test func readsAnswerFromTheFlagsAndAnUnknownKeyIsAnAnswer() throws {
        let rig = try VarlinkRig()
        defer { rig.cleanUp() }
        let client = try rig.connect()
        let flag = try client.call("Get", ["key": "dark_mode"])
        #expect(flag == ["parameters": ["flag": Fixtures.wireValue(Fixtures.darkMode)]])
        #expect(try client.call("Get", ["key": "no_such_flag"]) == ["parameters": ["flag": .null]])
        let all = try #require(try client.call("GetAll")?["parameters"])
        #expect(all["flags"] == Fixtures.wire(Fixtures.all))
        #expect(all["revision"] == 1)
        let status = try #require(try client.call("GetStatus")?["parameters"])
        #expect(status["source"] == "file" && status["flags"] == 5 && status["epoch"] == all["epoch"])
        let explain = try #require(try client.call("Explain", ["key": "new_Checkout"])?["parameters"])
        #expect(explain["absence"] == "caseDiffers")
    }

    @Test func callsThatMayWaitAnswerInOrder() throws {
        let rig = try VarlinkRig()
        defer { rig.cleanUp() }
        let client = try rig.connect()
        try client.send("Refresh")
        try client.send("LogImpression", ["key": "dark_mode"])
        try client.send("SetUserId", ["userId": "alice"])
        try client.send("SetAppState", ["state": "background"])
        try client.send("Get", ["key": "banner"])
        #expect(client.reply()?["parameters"]?["fromNetwork"] == false)
        #expect(client.reply()?["parameters"]?["outcome"] == "logged")
        #expect(client.reply()?["parameters"]?["userId"] == "alice")
        #expect(client.reply()?["parameters"]?["sessionStarted"] != nil)
        #expect(client.reply() == ["parameters": ["flag": .null]])
        #expect(try client.call("GetStatus")?["parameters"]?["userId"] == "alice")
    }

    @Test func badInputGetsTheIDLsErrorsAndTheConnectionGoesOn() throws {
        let rig = try VarlinkRig()
        defer { rig.cleanUp() }
        let client = try rig.connect()
        let missing = try client.call("Get")
        #expect(missing == ["error": "org.varlink.service.InvalidParameter", "parameters": ["parameter": "key"]])
        let state = try client.call("SetAppState", ["state": "sideways"])
        #expect(state?["parameters"]?["parameter"] == "state")
        #expect(try client.call("Listen")?["error"] == "org.varlink.service.ExpectedMore")
        try client.send(Array("not json".utf8) + [0])
        #expect(client.reply()?["error"] == "io.github.pwflagsd.Flags.InvalidMessage")
        // oneway: carried out, never answered; the next call's reply is the next reply.
        try client.send("SetUserId", ["userId": "bob"], oneway: true)
        #expect(try client.call("Get", ["key": "banner"]) == ["parameters": ["flag": .null]])
        #expect(try client.call("GetStatus")?["parameters"]?["userId"] == "bob")
        #expect(rig.daemon.isRunning)
    }

    @Test func aMessageOverMaxLineBytesIsRefusedAndTheConnectionCloses() throws {
        let rig = try VarlinkRig(extra: "[Daemon]\nMaxLineBytes=1024\n")
        defer { rig.cleanUp() }
        let client = try rig.connect()
        try client.send(Array(#"{"method":"io.github.pwflagsd.Flags.Get","parameters":{"key":""#.utf8))
        try client.send([UInt8](repeating: UInt8(ascii: "a"), count: 2048))
        #expect(client.reply() == ["error": "io.github.pwflagsd.Flags.MessageTooLong", "parameters": ["limit": 1024]])
        #expect(client.isClosedByPeer())
        #expect(try rig.connect().call("Get", ["key": "banner"]) == ["parameters": ["flag": .null]])
    }
}

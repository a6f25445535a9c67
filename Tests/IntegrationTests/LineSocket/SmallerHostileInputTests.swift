import FlagsCore
import Foundation
import TestSupport
import Testing

/// Small holes found by a hostile local user: each closed on the real daemon and the real CLI.
@Suite(.hangLimit) struct SmallerHostileInputTests {
    @Test func aTokenFileWithTrailingNulBytesDoesNotAcceptItsPrefix() throws {
        let rig = try OFREPRig(tcp: true, tokenFile: Array("abc".utf8) + [UInt8](repeating: 0, count: 256))
        defer { rig.cleanUp() }
        #expect(try rig.client().post(OFREPRig.bulk, headers: ["Authorization: Bearer abc"])?.status == 401)
    }

    @Test(arguments: ["Content-Length: 2\r\nContent-Length:\r\n", "Content-Length: ,2\r\n", "Content-Length: 2,,2\r\n"])
    func anEmptyContentLengthElementIs400(fields: String) throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let client = try rig.client()
        client.send("POST \(OFREPRig.bulk) HTTP/1.1\r\n\(fields)\r\n{}")
        #expect(client.readResponse()?.status == 400)
        try rig.expectStillServing()
    }

    @Test(arguments: ["-1e-999", "1e-400", "1e999"])
    func aNumberTooSmallToHoldIsRefusedAsOneTooLarge(number: String) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let line = #"{"jsonrpc":"2.0","id":1,"method":"setOverride","params":{"key":"n","properties":{"p":"#
        let answer = try client.request(line + number + "}}}")
        #expect(answer?["error"]?["code"] == -32700, "\(String(describing: answer))")
        #expect(try SocketSession(socketPath: daemon.socketPath).result("listOverrides") == ["overrides": []])
    }

    @Test func keysThatLookLikeOptionsAreReadAfterDoubleDash() throws {
        let odd = Flag(key: "--json", isEnabled: true, ruleId: "r")
        let dash = Flag(key: "-x", isEnabled: false, ruleId: "default")
        let daemon = try DaemonProcess.serving([odd, dash])
        defer { daemon.cleanUp() }
        let got = try CLI.run(["--socket", daemon.socketPath, "get", "--", "--json"])
        #expect(got.status == 0, "\(got)")
        #expect(got.stdout.hasPrefix("--json: enabled"), "\(got)")
        let enabled = try CLI.run(["--socket", daemon.socketPath, "--", "is-enabled", "-x"])
        #expect(enabled.stdout == "false\n", "\(enabled)")
        let set = try CLI.run(["--socket", daemon.socketPath, "override", "set", "--", "--json", "--enabled", "false"])
        #expect(set.status == 2, "after --, --enabled is an argument: \(set)")
        let forced = try CLI.run([
            "--socket", daemon.socketPath, "override", "set", "--enabled", "false", "--", "--json",
        ])
        #expect(forced.status == 0, "\(forced)")
        #expect(forced.stdout.hasPrefix("--json: disabled"), "\(forced)")
    }
}

import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Control calls that write the state directory and the log, from a peer user other than root and the daemon's,
/// are bounded: a burst of 20, then 5 a second, on every surface together; past it -32004 (Varlink's
/// `TooManyStateChanges`) and nothing changes.
@Suite(.hangLimit, .enabled(if: getuid() == 0, "creates a user: needs root"))
struct StateWriteRateTests {
    @Test func aUserLoopingOnSetUserIdIsRefusedPastTheBurstAndTheLastAnsweredUserIsKept() throws {
        let member = try SystemUser(prefix: "pwfw")
        defer { member.remove() }
        let daemon = try DaemonProcess.serving(Fixtures.all, extra: "[Daemon]\nSocketMode=0666\n")
        defer { daemon.cleanUp() }
        #expect(chmod(daemon.directory.path, 0o755) == 0)
        let calls = (0..<60).map { #"{"id":\#($0),"method":"setUserId","params":{"userId":"user-\#($0)"}}"# }
        let outcome = try member.send(calls, to: daemon.socketPath)
        let answers = outcome.stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
        try #require(answers.count == 60, "\(outcome)")
        let accepted = answers.compactMap { $0["result"]?["userId"]?.stringValue }
        let refused = answers.filter { $0["error"]?["code"] == -32004 }
        #expect(refused.count > 0 && accepted.count < 40, "\(accepted.count) accepted, \(refused.count) refused")
        // What the member was last told is what the daemon keeps.
        let status = try #require(try daemon.connect().call("status")?["result"])
        #expect(status["userId"]?.stringValue == accepted.last, "\(status)")
        print("state write rate: of 60 setUserId calls \(accepted.count) accepted, \(refused.count) refused")
    }

    /// One program run as the member spends the burst on the line socket, then calls `SetUserId` on Varlink at
    /// once: the Varlink call finds the same bucket empty (before one policy, each surface had buckets of its
    /// own, and a second surface doubled the rate).
    @Test func aUsersWritesShareOneRateAcrossTheLineSocketAndVarlink() throws {
        let member = try SystemUser(prefix: "pwfx")
        defer { member.remove() }
        let rig = try VarlinkRig(extra: "[Daemon]\nSocketMode=0666\n")
        defer { rig.cleanUp() }
        #expect(chmod(rig.daemon.directory.path, 0o755) == 0)
        let program = """
            import json, socket, sys
            line = socket.socket(socket.AF_UNIX); line.connect(sys.argv[1]); reader = line.makefile("rb")
            refused = 0
            for index in range(30):
                line.sendall(json.dumps({"id": index, "method": "setUserId",
                                         "params": {"userId": "line-%d" % index}}).encode() + b"\\n")
                refused += "error" in json.loads(reader.readline())
            varlink = socket.socket(socket.AF_UNIX); varlink.connect(sys.argv[2])
            varlink.sendall(json.dumps({"method": "io.github.pwflagsd.Flags.SetUserId",
                                        "parameters": {"userId": "varlink"}}).encode() + b"\\0")
            reply = b""
            while not reply.endswith(b"\\0"):
                chunk = varlink.recv(65536)
                if not chunk: break
                reply += chunk
            print(json.dumps({"lineRefused": refused, "varlink": json.loads(reply[:-1])}))
            """
        let outcome = try member.run(
            "/usr/bin/python3", ["-c", program, rig.daemon.socketPath, rig.socketPath], timeout: .seconds(30))
        let result = try JSONValue(parsing: outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect((result["lineRefused"]?.integerValue ?? 0) >= 5, "\(outcome)")
        #expect(result["varlink"]?["error"] == "io.github.pwflagsd.Flags.TooManyStateChanges", "\(outcome)")
        let status = try #require(try rig.daemon.connect().call("status")?["result"])
        #expect(status["userId"]?.stringValue?.hasPrefix("line-") == true, "\(status)")
    }
}

import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Control calls that write the state directory and the log, from a peer user other than root and the daemon's,
/// are bounded: a burst of 20, then 5 a second; past it -32004 and nothing changes.
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
}

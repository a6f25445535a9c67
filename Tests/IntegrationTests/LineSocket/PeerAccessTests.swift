import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Peers of other users: `ControlGroups` (with `SO_PEERCRED` and `SO_PEERGROUPS`) and the socket's own permissions.
///
/// The test creates users and groups, so it runs only as root (as CI does); they are deleted afterwards.
@Suite(.enabled(if: getuid() == 0, "creates users and groups: needs root"), .hangLimit)
struct PeerAccessTests {
    static let controlCalls = [
        #"{"id":1,"method":"setUserId","params":{"userId":"from-peer"}}"#,
        #"{"id":2,"method":"setAppState","params":{"state":"background"}}"#,
        #"{"id":3,"method":"pushRegistered"}"#,
        #"{"id":4,"method":"reload"}"#,
        #"{"id":5,"method":"get","params":{"key":"dark_mode"}}"#,
    ]

    /// The answer lines a user's client printed, parsed.
    private func answers(_ outcome: CLI.Outcome) -> [JSONValue] {
        outcome.stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
    }

    @Test func aPeerOutsideControlGroupsIsRefusedAndAMemberThroughASupplementaryGroupIsNot() throws {
        let control = try SystemGroup(prefix: "pwfc")
        defer { control.remove() }
        let outsider = try SystemUser(prefix: "pwfo")
        defer { outsider.remove() }
        let member = try SystemUser(prefix: "pwfm", supplementaryGroups: [control])
        defer { member.remove() }
        // Everybody may connect here: what is under test is the method check, not the socket's mode.
        let daemon = try DaemonProcess.serving(
            Fixtures.all, extra: "[Daemon]\nSocketMode=0666\nControlGroups=\(control.name)\n")
        defer { daemon.cleanUp() }
        #expect(chmod(daemon.directory.path, 0o755) == 0)

        let refused = answers(try outsider.send(Self.controlCalls, to: daemon.socketPath))
        try #require(refused.count == 5, "outsider's answers: \(refused)")
        for answer in refused.prefix(4) {
            #expect(answer["error"]?["code"] == -32001, "\(answer)")
        }
        #expect(refused[4]["result"]?["flag"]?["key"] == "dark_mode")
        #expect(daemon.log.contains("refused a control method"))

        let allowed = answers(try member.send(Self.controlCalls, to: daemon.socketPath))
        try #require(allowed.count == 5, "member's answers: \(allowed)")
        #expect(allowed[0]["result"]?["userId"] == "from-peer", "\(allowed[0])")
        #expect(allowed[1]["result"]?["sessionStarted"] != nil, "\(allowed[1])")
        #expect(allowed[2]["result"]?["refreshStarted"] != nil, "\(allowed[2])")
        // reload stays with root and the daemon's own user, group or not.
        #expect(allowed[3]["error"]?["code"] == -32001, "\(allowed[3])")
        #expect(
            allowed[3]["error"]?["message"] == "not permitted: reload is limited to root and the daemon's user",
            "\(allowed[3])")
        #expect(refused[0]["error"]?["message"] == "not permitted: setUserId is limited to ControlGroups")
        #expect(allowed[4]["result"]?["flag"]?["key"] == "dark_mode")
        let status = try #require(try daemon.connect().call("status")?["result"])
        #expect(status["userId"] == "from-peer")
    }

    @Test func theSocketKeepsOutUsersOutsideItsGroup() throws {
        let socketGroup = try SystemGroup(prefix: "pwfs")
        defer { socketGroup.remove() }
        let outsider = try SystemUser(prefix: "pwfo")
        defer { outsider.remove() }
        let insider = try SystemUser(prefix: "pwfi", supplementaryGroups: [socketGroup])
        defer { insider.remove() }
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        #expect(chmod(daemon.directory.path, 0o755) == 0)
        // The daemon creates the socket with SocketMode (0660) as its own user and group; the socket's group is
        // what systemd's SocketGroup= (or an administrator) sets.
        var info = stat()
        #expect(stat(daemon.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o660)
        let gid = try #require(socketGroup.gid)
        #expect(chown(daemon.socketPath, 0, gid) == 0)

        let pwflags = DaemonProcess.executable("pwflags")
        let kept = try outsider.run(pwflags, ["--socket", daemon.socketPath, "get", "dark_mode"])
        #expect(kept.status == 69, "\(kept)")
        let raw = try outsider.send([#"{"id":1,"method":"status"}"#], to: daemon.socketPath)
        #expect(raw.status == 69 && raw.stdout.contains("errno \(EACCES)"), "\(raw)")

        let admitted = try insider.run(pwflags, ["--socket", daemon.socketPath, "--json", "get", "dark_mode"])
        #expect(admitted.status == 0, "\(admitted)")
        #expect(admitted.stdout.contains("dark_mode"))
        #expect(daemon.isRunning)
    }
}

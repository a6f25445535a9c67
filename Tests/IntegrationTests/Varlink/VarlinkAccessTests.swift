import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The line socket's access rules on the Varlink socket: `ControlGroups` by `SO_PEERCRED` and `SO_PEERGROUPS`,
/// and each user's share of the connections. Creates users and groups, so it runs only as root (as CI does).
@Suite(.enabled(if: getuid() == 0, "creates users and groups: needs root"), .serialized, .hangLimit)
struct VarlinkAccessTests {
    /// The program's lines, parsed.
    private func lines(_ outcome: CLI.Outcome) -> [JSONValue] {
        outcome.stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
    }

    @Test func aPeerOutsideControlGroupsIsDeniedAndAMemberIsNot() throws {
        let python = try VarlinkVenv.python()
        let control = try SystemGroup(prefix: "pwvc")
        defer { control.remove() }
        let outsider = try SystemUser(prefix: "pwvo")
        defer { outsider.remove() }
        let member = try SystemUser(prefix: "pwvm", supplementaryGroups: [control])
        defer { member.remove() }
        let rig = try VarlinkRig(extra: "[Daemon]\nSocketMode=0666\nControlGroups=\(control.name)\n")
        defer { rig.cleanUp() }
        #expect(chmod(rig.daemon.directory.path, 0o755) == 0)

        let refused = lines(try outsider.run(python, [VarlinkPythonTests.program, rig.socketPath, "control"]))
        try #require(refused.count == 3, "\(refused)")
        #expect(refused[1]["error"] == "io.github.pwflagsd.Flags.PermissionDenied")
        #expect(refused[1]["parameters"]?["method"] == "io.github.pwflagsd.Flags.SetUserId")
        #expect(refused[2]["value"]?["flag"]?["key"] == "dark_mode", "reads stay open to every peer")
        #expect(rig.daemon.log.contains("refused a control method METHOD=setUserId SURFACE=varlink"))

        let allowed = lines(try member.run(python, [VarlinkPythonTests.program, rig.socketPath, "control"]))
        try #require(allowed.count == 3, "\(allowed)")
        #expect(allowed[1]["value"]?["userId"] == "from-python")
    }

    @Test func oneUserHoldsAtMostAQuarterOfTheConnections() throws {
        let user = try SystemUser(prefix: "pwvs")
        defer { user.remove() }
        let rig = try VarlinkRig(extra: "[Daemon]\nSocketMode=0666\nMaxConnections=8\n")
        defer { rig.cleanUp() }
        #expect(chmod(rig.daemon.directory.path, 0o755) == 0)
        // Three connections of one user at once (a quarter of 8 is 2): the third is closed at once.
        let script = """
            use IO::Socket::UNIX; $| = 1; my @s;
            for (1..3) { push @s, IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]) or die "connect $!"; }
            for my $s (@s) {
                print $s "{\\"method\\":\\"io.github.pwflagsd.Flags.Get\\",\\"parameters\\":{\\"key\\":\\"x\\"}}\\0";
                local $/ = "\\0"; my $r = <$s>; print defined $r ? "reply\\n" : "closed\\n";
            }
            """
        let outcome = try user.run("/usr/bin/perl", ["-e", script, rig.socketPath])
        #expect(outcome.stdout == "reply\nreply\nclosed\n", "\(outcome)")
        #expect(rig.daemon.log.contains("Varlink: refused connections of a user past its share"))
    }
}

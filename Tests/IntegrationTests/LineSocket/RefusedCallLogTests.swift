import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Refused control calls (-32001) are logged at most once a second, as refused connections are: a peer that
/// loops on a call it may not make cannot flood the journal.
///
/// The peer must be another user than the daemon's (which may always call), so this runs only as root.
@Suite(.enabled(if: getuid() == 0, "creates users and groups: needs root"), .hangLimit)
struct RefusedCallLogTests {
    @Test func aFloodOfRefusedCallsIsLoggedAboutOnceASecond() throws {
        let control = try SystemGroup(prefix: "pwfc")
        defer { control.remove() }
        let outsider = try SystemUser(prefix: "pwfo")
        defer { outsider.remove() }
        let daemon = try DaemonProcess.serving(
            Fixtures.all, extra: "[Daemon]\nSocketMode=0666\nControlGroups=\(control.name)\n")
        defer { daemon.cleanUp() }
        #expect(chmod(daemon.directory.path, 0o755) == 0)
        // For 3 seconds, one refused call after another, each answered before the next; prints the count.
        let script = """
            use IO::Socket::UNIX; use Time::HiRes qw(time); $| = 1;
            my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => shift @ARGV) or exit 69;
            my ($n, $refused, $end) = (0, 0, time + 3);
            while (time < $end) {
                $n++; print $s "{\\"id\\":$n,\\"method\\":\\"pushRegistered\\"}\\n";
                my $answer = <$s>; last unless defined $answer; $refused++ if $answer =~ /-32001/;
            }
            print "$refused\\n";
            """
        let started = ContinuousClock.now
        let outcome = try outsider.run("/usr/bin/perl", ["-e", script, daemon.socketPath])
        let elapsed = ContinuousClock.now - started
        let refused = try #require(Int(outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(outcome)")
        #expect(refused > 100, "\(outcome)")
        let logged = daemon.log.components(separatedBy: "refused a control method").count - 1
        #expect(logged >= 1, "\(daemon.log)")
        #expect(
            logged <= Int(elapsed.components.seconds) + 2, "\(logged) lines for \(refused) refusals:\n\(daemon.log)")
        // The line says how many calls it stands for.
        #expect(daemon.log.contains("CALLS_REFUSED"), "\(daemon.log.prefix(2000))")
        #expect(try daemon.connect().call("get", ["key": "dark_mode"])?["result"]?["flag"]?["key"] == "dark_mode")
    }
}

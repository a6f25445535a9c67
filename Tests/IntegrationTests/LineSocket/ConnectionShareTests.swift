import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One local user cannot lock the others out of either socket, root least of all: each peer user gets a share of
/// the connections, root and the daemon's user keep room of their own, and connections with nothing to do are
/// closed after `IdleConnectionTimeout`.
///
/// The share tests create a user, so they run only as root (as CI does); the user is deleted afterwards.
@Suite(.hangLimit) struct ConnectionShareTests {
    /// A process of `user` that opens `count` connections to `socketPath` and keeps them, idle. `request` is sent
    /// on each once to learn whether the daemon kept it (an answer) or closed it at once (end of stream); the
    /// process prints `kept N` and holds what it kept until its standard input closes.
    final class Holder {
        let process = Process()
        private let input = Pipe()
        private let output = Pipe()

        init(user: SystemUser, socketPath: String, count: Int, request: String) throws {
            let script = """
                use IO::Socket::UNIX; $| = 1;
                my ($path, $count, $request) = @ARGV; my @kept;
                for (1..$count) {
                    my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path) or next;
                    print $s $request; my $answer = <$s>;
                    push @kept, $s if defined $answer && $answer =~ /"result"|^HTTP\\/1\\.1 [1-4]/;
                }
                print "kept ", scalar(@kept), "\\n";
                my $wait = <STDIN>;
                """
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = [
                "--reuid=\(user.name)", "--regid=\(user.name)", "--init-groups", "--", "/usr/bin/perl", "-e", script,
                socketPath, String(count), request,
            ]
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// How many connections the daemon kept, once the process has opened them all; nil if it never said.
        func kept() -> Int? {
            let line = LineReader(fd: output.fileHandleForReading.fileDescriptor).readLine(timeout: .seconds(30))
            return line.flatMap { $0.hasPrefix("kept ") ? Int($0.dropFirst(5)) : nil }
        }

        func release() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    @Test(.enabled(if: getuid() == 0, "creates a user: needs root"))
    func aUserHoldingEveryConnectionItCanGetLeavesRoomForRoot() throws {
        let member = try SystemUser(prefix: "pwfh")
        defer { member.remove() }
        let daemon = try DaemonProcess.serving(Fixtures.all, extra: "[Daemon]\nSocketMode=0666\nMaxConnections=16\n")
        defer { daemon.cleanUp() }
        #expect(chmod(daemon.directory.path, 0o755) == 0)
        let holder = try Holder(
            user: member, socketPath: daemon.socketPath, count: 16,
            request: #"{"id":1,"method":"get","params":{"key":"dark_mode"}}"# + "\n")
        defer { holder.release() }
        let kept = try #require(holder.kept(), "the holder never reported")
        // A quarter of MaxConnections per user.
        #expect(kept == 4, "the member holds \(kept) of 16 connections")
        let outcome = try CLI.run(["--socket", daemon.socketPath, "get", "dark_mode"])
        #expect(outcome.status == 0, "root's get: \(outcome)")
        #expect(daemon.log.contains("refused connections of a user past its share"), "\(daemon.log)")
    }

    @Test(.enabled(if: getuid() == 0, "creates a user: needs root"))
    func aUserHoldingOFREPSlotsOnTheUnixSocketLeavesRoomForRoot() throws {
        let member = try SystemUser(prefix: "pwfh")
        defer { member.remove() }
        let directory = try TemporaryDirectory()
        let socket = directory.file("ofrep.sock")
        let daemon = try DaemonProcess.serving(
            Fixtures.all, extra: "[OFREP]\nListenAddress=\(socket)\nConnectionLimit=8\n")
        defer {
            daemon.cleanUp()
            directory.remove()
        }
        #expect(chmod(directory.path, 0o755) == 0 && chmod(socket, 0o666) == 0)
        let holder = try Holder(
            user: member, socketPath: socket, count: 8,
            request: "GET /ofrep/v1/configuration HTTP/1.1\r\nHost: localhost\r\n\r\n")
        defer { holder.release() }
        let kept = try #require(holder.kept(), "the holder never reported")
        #expect(kept == 2, "the member holds \(kept) of 8 connections")
        let client = try HTTPClient(unixSocket: socket)
        let response = client.post("/ofrep/v1/evaluate/flags/dark_mode")
        #expect(response?.status == 200, "root got \(String(describing: response?.status))")
    }

    @Test func aConnectionWithNothingToDoIsClosedAndASubscriberIsNot() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all, extra: "[Daemon]\nIdleConnectionTimeout=1s\n")
        defer { daemon.cleanUp() }
        let subscriber = try daemon.connect()
        #expect(try subscriber.call("listen")?["result"] != nil)
        let idle = try daemon.connect()
        #expect(idle.isClosedByPeer(timeout: .seconds(10)), "an idle connection was kept past IdleConnectionTimeout")
        // A second idle connection, opened after the first was closed, closes at a later sweep: the subscriber
        // has been through that one too.
        let later = try daemon.connect()
        #expect(later.isClosedByPeer(timeout: .seconds(10)))
        #expect(try subscriber.call("status")?["result"]?["connections"] != nil)
    }
}

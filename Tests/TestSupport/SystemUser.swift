import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A user created for one test with `useradd` (with a primary group of its own name) and deleted with
/// `userdel`; commands run as the user through `setpriv`, with its supplementary groups.
public final class SystemUser: Sendable {
    public let name: String

    /// Creates a user named `prefix` and a random suffix, member of `supplementaryGroups` besides its own group.
    public convenience init(prefix: String, supplementaryGroups: [SystemGroup] = []) throws {
        try self.init(prefix: prefix, groupNames: supplementaryGroups.map(\.name))
    }

    /// Creates a user named `prefix` and a random suffix, member of the groups named `groupNames`.
    public init(prefix: String, groupNames: [String]) throws {
        name = prefix + String(UInt32.random(in: 0..<0xFFFF_FFFF), radix: 36)
        var arguments = ["--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group"]
        if !groupNames.isEmpty {
            arguments += ["--groups", groupNames.joined(separator: ",")]
        }
        try Command.run("/usr/sbin/useradd", arguments + [name])
    }

    private init(existing name: String) {
        self.name = name
    }

    /// The system user `name`, made (`useradd --system`, with a group of its name) if the machine lacks it, and
    /// then left in place: the bus policy the package installs names the fixed user `pwflagsd`.
    public static func ensureSystemUser(_ name: String) throws -> SystemUser {
        if getpwnam(name) == nil {
            let outcome = try Command.run(
                "/usr/sbin/useradd",
                ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", name], check: false)
            // Another test process may have made it in between.
            guard outcome.status == 0 || getpwnam(name) != nil else {
                throw Command.Failure(description: "useradd \(name): \(outcome)")
            }
        }
        return SystemUser(existing: name)
    }

    /// Runs `executable arguments…` as this user, its primary group and its supplementary groups.
    public func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(30)) throws
        -> CLI.Outcome
    {
        try Command.run(
            "/usr/bin/setpriv",
            ["--reuid=\(name)", "--regid=\(name)", "--init-groups", "--", executable] + arguments,
            check: false,
            timeout: timeout
        )
    }

    /// Sends each of `lines` to the socket at `socketPath` from a process running as this user, and returns
    /// the answer line to each (or `closed`); exits 69 printing the errno when the connection is refused.
    ///
    /// The client is a few lines of Perl (`perl-base` is essential on Debian): the test needs a process of
    /// another user, and `pwflags` has no commands for every control method.
    public func send(_ lines: [String], to socketPath: String) throws -> CLI.Outcome {
        let script = """
            use IO::Socket::UNIX; $| = 1;
            my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => shift @ARGV)
                or do { print "connect errno ", $! + 0, "\\n"; exit 69 };
            for my $line (@ARGV) { print $s "$line\\n"; my $answer = <$s>; print defined $answer ? $answer : "closed\\n"; }
            """
        return try run("/usr/bin/perl", ["-e", script, socketPath] + lines)
    }

    /// A launcher (`DaemonProcess`'s) that hands `paths` (shell words, expanded in the daemon's environment:
    /// `${NOTIFY_SOCKET%/*}` is the daemon's directory) and `$NOTIFY_SOCKET` to this user, then execs the daemon
    /// as this user with its groups; the pid stays the daemon's.
    public func launcher(handingOver paths: [String]) -> [String] {
        let chown = "chown \(name): \"$NOTIFY_SOCKET\" " + paths.map { "\"\($0)\"" }.joined(separator: " ")
        let exec = "exec /usr/bin/setpriv --reuid=\(name) --regid=\(name) --init-groups -- \"$@\""
        return ["/bin/sh", "-c", chown + " && " + exec, "sh"]
    }

    public func remove() {
        _ = try? Command.run("/usr/sbin/userdel", [name])
    }
}

import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A state directory, or a file in it, that another local user made first: a root daemon must not believe it
/// (as sshd's StrictModes). The attacker is a real other user, working in a world-writable sticky directory as
/// `/tmp` is.
///
/// The test creates users, so it runs only as root (as CI does); they are deleted afterwards.
@Suite(.hangLimit, .enabled(if: getuid() == 0, "creates users: needs root"))
struct PlantedStateTests {
    /// The overrides a planter would like every client to be served.
    static let planted = #"{"overrides":[{"key":"dark_mode","enabled":true,"properties":{"theme":"pwned"}}]}"#

    /// A directory like `/tmp` (1777), for the planter to work in.
    private func sharedTmp() throws -> TemporaryDirectory {
        let shared = try TemporaryDirectory(prefix: "pwfshared")
        try #require(chmod(shared.path, 0o1777) == 0)
        return shared
    }

    /// A daemon directory with the flags file, its configuration naming `state` and a socket in it.
    private func daemonDirectory(state: String) throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        try directory.write(LocalFlags.fileName, LocalFlags.text(Fixtures.all))
        let config = LocalFlags.config(
            in: directory, extra: "\n[Daemon]\nSocketPath=\(directory.file("d.sock"))\nStateDirectory=\(state)\n")
        return (directory, config)
    }

    @Test func aStateDirectoryAnotherUserMadeFirstStopsTheStartWithAClearMessage() throws {
        let planter = try SystemUser(prefix: "pwfp")
        defer { planter.remove() }
        let shared = try sharedTmp()
        defer { shared.remove() }
        let state = shared.file("state")
        // The planter makes the directory the daemon will use, with an override file in it, before the daemon.
        #expect(try planter.run("/bin/mkdir", ["-m", "0755", state]).status == 0)
        #expect(
            try planter.run("/bin/sh", ["-c", "printf '%s' '\(Self.planted)' > \(state)/overrides.json"]).status == 0)
        let (directory, config) = try daemonDirectory(state: state)
        let daemon = try DaemonProcess(config: config, directory: directory, addDefaults: false, waitForReady: false)
        defer { daemon.cleanUp(expecting: .status(1)) }
        #expect(daemon.waitForExit() == 1, "the daemon served a planted state directory; log:\n\(daemon.log)")
        #expect(daemon.log.contains("refusing the state directory: \(state) is owned by uid"), "\(daemon.log)")
    }

    @Test func aStateDirectoryOthersMayWriteIsRefusedAndARootOwnedOneIsNot() throws {
        let shared = try sharedTmp()
        defer { shared.remove() }
        let state = shared.file("state")
        try #require(mkdir(state, 0o700) == 0 && chmod(state, 0o777) == 0)
        let (directory, config) = try daemonDirectory(state: state)
        let refused = try DaemonProcess(config: config, directory: directory, addDefaults: false, waitForReady: false)
        defer { refused.cleanUp(expecting: .status(1)) }
        #expect(refused.waitForExit() == 1, "log:\n\(refused.log)")
        #expect(refused.log.contains("is writable by its group or others (mode 0777)"), "\(refused.log)")

        try #require(chmod(state, 0o700) == 0)
        #expect(refused.waitForExit() == 1)
        let (again, againConfig) = try daemonDirectory(state: state)
        let accepted = try DaemonProcess(config: againConfig, directory: again, addDefaults: false)
        defer { accepted.cleanUp() }
        #expect(try accepted.connect().call("status")?["result"] != nil)
    }

    @Test func aStateFileAnotherUserOwnsIsNotRead() throws {
        let planter = try SystemUser(prefix: "pwfp")
        defer { planter.remove() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = directory.file("state")
        try #require(mkdir(state, 0o700) == 0)
        // As if the planter had been able to leave a file there (an earlier, laxer directory): hers, mode 0644.
        try Self.planted.write(toFile: state + "/overrides.json", atomically: false, encoding: .utf8)
        #expect(
            try Command.run("/bin/chown", ["\(planter.name):\(planter.name)", state + "/overrides.json"]).status == 0)
        try directory.write(LocalFlags.fileName, LocalFlags.text(Fixtures.all))
        let daemon = try DaemonProcess(config: LocalFlags.config(in: directory), directory: directory)
        defer { daemon.cleanUp() }
        let flag = try #require(try daemon.connect().call("get", ["key": "dark_mode"])?["result"]?["flag"])
        #expect(flag["properties"]?["theme"] != "pwned", "a planted overrides file was served: \(flag)")
        #expect(daemon.log.contains("ignored the overrides file"), "\(daemon.log)")
        #expect(daemon.log.contains("neither root nor the daemon's user"), "\(daemon.log)")
    }
}

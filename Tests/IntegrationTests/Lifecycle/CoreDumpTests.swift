import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The API token lives in the daemon's memory: no core file may carry it, whoever starts the daemon.
@Suite(.hangLimit) struct CoreDumpTests {
    @Test("The daemon runs with a zero core file limit")
    func coreLimitIsZero() throws {
        let daemon = try SystemdNotifyTests.localDaemon()
        defer { daemon.cleanUp() }
        let limits = try String(contentsOfFile: "/proc/\(daemon.process.processIdentifier)/limits", encoding: .utf8)
        let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        #expect(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"])
    }

    @Test("The daemon is not dumpable: a process of the same user without CAP_SYS_PTRACE cannot read its memory")
    func notDumpable() throws {
        // The daemon and the reader run as the same user with the same capabilities, neither with CAP_SYS_PTRACE:
        // then only the dumpable flag decides whether the reader may follow the daemon's /proc/PID links.
        let withoutPtrace = ["/usr/bin/setpriv", "--bounding-set=-sys_ptrace", "--inh-caps=-sys_ptrace", "--"]
        let directory = try TemporaryDirectory()
        try directory.write("flags.json", #"{"flags":[]}"#)
        let daemon = try DaemonProcess(
            config: "[FeatureFlags]\nLocalFlagsFile=\(directory.file("flags.json"))\n", directory: directory,
            launcher: withoutPtrace)
        defer { daemon.cleanUp() }
        let pid = daemon.process.processIdentifier
        let outcome = try Command.run(
            withoutPtrace[0], withoutPtrace.dropFirst() + ["/bin/ls", "-l", "/proc/\(pid)/exe"], check: false)
        #expect(outcome.status != 0, "\(outcome)")
        #expect(outcome.stderr.contains("Permission denied"), "\(outcome)")
        // The tests' own reads of the daemon's /proc files, as root, still work.
        #expect(ProcessStatus(pid: pid) != nil)
    }
}

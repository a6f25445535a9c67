import Foundation
import TestSupport
import Testing

/// `--check-config` promises every problem, so it also reads the files the configuration names that the daemon
/// reads only once it runs: an `[OFREP] TokenFile` that is missing, unreadable or empty is a problem there, at
/// the line that set it, not only a log line of the running daemon. So is a `ServerURL` from which flags can never
/// be fetched (R16), which the daemon would otherwise say only in `status.problem`.
@Suite(.hangLimit) struct CheckConfigFilesTests {
    private static func check(_ directory: TemporaryDirectory) throws -> CLI.Outcome {
        try Command.run(
            DaemonProcess.executable("pwflagsd"), ["--check-config", "--config", directory.file("pwflagsd.conf")],
            check: false)
    }

    @Test func aTokenFileInADropInThatDoesNotExistIsAProblemAtItsLine() throws {
        let directory = try TemporaryDirectory(prefix: "pwcfg")
        defer { directory.remove() }
        try directory.write("pwflagsd.conf", "[OFREP]\nListenAddress=127.0.0.1:8016\nTokenFile=token\n")
        try directory.write("token", "a-token-of-thirty-two-characters\n")
        #expect(try Self.check(directory).status == 0)
        try FileManager.default.createDirectory(
            atPath: directory.file("pwflagsd.conf.d"), withIntermediateDirectories: true)
        try Data("# moved\n[OFREP]\nTokenFile=/nonexistent/ofrep-token\n".utf8).write(
            to: URL(fileURLWithPath: directory.file("pwflagsd.conf.d/ofrep.conf")))
        let outcome = try Self.check(directory)
        #expect(outcome.status == 1, "\(outcome)")
        #expect(
            outcome.stderr.contains(
                "pwflagsd.conf.d/ofrep.conf:3: cannot read the OFREP TokenFile /nonexistent/ofrep-token:"),
            "\(outcome)")
    }

    @Test func anEmptyTokenFileIsAProblemBesideTheOthers() throws {
        let directory = try TemporaryDirectory(prefix: "pwcfg")
        defer { directory.remove() }
        try directory.write("pwflagsd.conf", "[OFREP]\nTokenFile=token\n[Daemon]\nMaxLineBytes=12\n")
        try directory.write("token", "\n")
        let outcome = try Self.check(directory)
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr.contains("pwflagsd.conf:2: the OFREP TokenFile"), "\(outcome)")
        #expect(outcome.stderr.contains("is empty"), "\(outcome)")
        #expect(outcome.stderr.contains("pwflagsd.conf:4:"), "every problem, not only the first: \(outcome)")
    }

    @Test func aServerURLThatCannotFetchIsAProblemAtItsLine() throws {
        let directory = try TemporaryDirectory(prefix: "pwcfg")
        defer { directory.remove() }
        try directory.write(
            "pwflagsd.conf", "[Pushwoosh]\nApplicationCode=ABCDE-12345\nServerURL=https://example.com/api/\n")
        let outcome = try Self.check(directory)
        #expect(outcome.status == 1, "\(outcome)")
        #expect(
            outcome.stderr.contains(
                "pwflagsd.conf:3: ServerURL https://example.com/api/ does not end with json/1.3/, so flags are never"),
            "\(outcome)")
        // The same address with the API's path checks clean, and so does no ServerURL at all.
        try directory.write(
            "pwflagsd.conf",
            "[Pushwoosh]\nApplicationCode=ABCDE-12345\nServerURL=https://example.com/api/json/1.3/\n")
        #expect(try Self.check(directory).status == 0)
        try directory.write("pwflagsd.conf", "[Pushwoosh]\nApplicationCode=ABCDE-12345\n")
        #expect(try Self.check(directory).status == 0)
    }
}

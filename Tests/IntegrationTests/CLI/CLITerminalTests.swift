import FlagsCore
import Foundation
import TestSupport
import Testing

/// On a terminal, nothing that came from a flag source reaches the person as a control character; through a pipe
/// and with `--json`, the output stays exact.
@Suite(
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) for a pty"),
    .hangLimit)
struct CLITerminalTests {
    static let hostileKey = "evil\u{1B}]0;pwned\u{07}\nforged: enabled (rule r)"
    static let hostile = Flag(
        key: hostileKey, isEnabled: true, ruleId: "r\u{1B}[5m",
        properties: ["\u{1B}[2J": "\u{9B}31m", "plain": "x"])

    /// `pwflags ARGS` with its stdout on a pseudo-terminal (script(1)); what the terminal was sent.
    static func onTerminal(_ daemon: DaemonProcess, _ arguments: [String]) throws -> [UInt8] {
        let line =
            (["'" + DaemonProcess.executable("pwflags") + "'", "--socket", "'" + daemon.socketPath + "'"]
            + arguments.map { "'" + $0 + "'" }).joined(separator: " ")
        let outcome = try Command.run("/usr/bin/script", ["-qec", line, "/dev/null"], check: false)
        return Array(outcome.stdout.utf8)
    }

    static func hasControl(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        return text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) }
    }

    @Test(arguments: [["list"], ["get", hostileKey], ["explain", hostileKey], ["override", "list"]])
    func aTerminalGetsEscapesNotControlCharacters(arguments: [String]) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all + [Self.hostile])
        defer { daemon.cleanUp() }
        _ = try SocketSession(socketPath: daemon.socketPath).result(
            "setOverride", ["key": .string(Self.hostileKey), "properties": ["\u{1B}[2J": "\u{9B}31m"]])
        let shown = try Self.onTerminal(daemon, arguments)
        let text = String(decoding: shown, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        #expect(!Self.hasControl(shown), "\(text.debugDescription)")
        #expect(text.contains("evil\\x1B]0;pwned\\x07\\nforged"), "\(text.debugDescription)")
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("forged") })
    }

    @Test func jsonAndPipesStayExact() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all + [Self.hostile])
        defer { daemon.cleanUp() }
        let json = String(decoding: try Self.onTerminal(daemon, ["--json", "get", Self.hostileKey]), as: UTF8.self)
        #expect(json.contains("\u{9B}31m"))
        let piped = try CLI.run(
            ["--socket", daemon.socketPath, "property", "--type", "string", Self.hostileKey, "\u{1B}[2J"])
        #expect(piped.stdout == "\u{9B}31m\n")
    }
}

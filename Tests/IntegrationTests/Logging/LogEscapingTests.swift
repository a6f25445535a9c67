import FlagsCore
import Foundation
import TestSupport
import Testing

/// The daemon's stderr log shows control characters from keys escaped: no NUL or escape sequence reaches it raw.
@Suite(.hangLimit) struct LogEscapingTests {
    @Test func aKeyWithANulAndAnEscapeSequenceIsLoggedEscaped() async throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let key = "nul\u{0}key\u{1B}[2J\u{9B}tab\there"
        _ = try SocketSession(socketPath: daemon.socketPath).result("setOverride", ["key": .string(key)])
        #expect(await Eventually.wait { daemon.log.contains("a flag is overridden on this device") })
        let log = daemon.log
        #expect(log.contains(#"FLAG_KEY=nul\x00key\x1B[2J\u009Btab\there"#), "\(log.debugDescription)")
        #expect(!log.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) })
    }
}

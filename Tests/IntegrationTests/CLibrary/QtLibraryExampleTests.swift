import FlagsCore
import Foundation
import TestSupport
import Testing

/// libpwflags in a Qt program's event loop, as docs/c-library.md shows it: the client's descriptor watched by a
/// QSocketNotifier, the listener called on the Qt thread.
@Suite(.hangLimit) struct QtLibraryExampleTests {
    @Test func aQtProgramHearsAChangeThroughItsEventLoop() throws {
        let daemon = try DaemonProcess.serving([Fixtures.checkout, Fixtures.banner])
        defer { daemon.cleanUp() }
        let program = try RunningCommand(try QtPrograms.libraryExample(), [daemon.socketPath])
        defer { program.stop() }
        #expect(program.waitForLine(containing: "new_checkout 1"), "the first snapshot never reached the listener")
        let disabled = Flag(key: "new_checkout", isEnabled: false, ruleId: "default")
        try daemon.writeFlags([disabled, Fixtures.banner])
        #expect(program.waitForLine(containing: "new_checkout 0"), "the change never reached the Qt loop")
    }
}

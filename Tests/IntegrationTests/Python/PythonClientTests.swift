import Foundation
import TestSupport
import Testing

/// The Python client (`Sources/python`, package `pwflags`): `Sources/python/run-tests.sh` makes its pinned venv
/// in `.build/python-venv` when missing, runs `mypy --strict`, then pytest (`Tests/python`) against this build's
/// pwflagsd. A machine without python3's venv or PyPI fails the test, never skips it.
@Suite(.serialized, .hangLimit) struct PythonClientTests {
    static let script = Repository.path("Sources/python/run-tests.sh")

    @Test func thePythonClientPassesMypyAndItsTestsAgainstTheDaemon() throws {
        let daemon = DaemonProcess.executable("pwflagsd")
        try #require(FileManager.default.isExecutableFile(atPath: daemon), "no pwflagsd at \(daemon)")
        try #require(FileManager.default.isExecutableFile(atPath: Self.script), "no \(Self.script)")
        // The venv's first creation downloads from PyPI; a later run takes seconds.
        let outcome = try Command.run(
            "/usr/bin/env", ["PWFLAGSD_BIN=\(daemon)", "/bin/bash", Self.script], check: false,
            timeout: .seconds(280))
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout.contains(" passed"), "\(outcome)")
        #expect(!outcome.stdout.contains(" failed") && !outcome.stdout.contains(" skipped"), "\(outcome)")
    }
}

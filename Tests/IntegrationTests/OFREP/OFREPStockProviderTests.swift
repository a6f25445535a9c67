import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// OpenFeature's stock Python OFREP provider (`openfeature-provider-ofrep` from PyPI, nobody here wrote it)
/// against the real daemon, through the example program of docs/openfeature.md (`Tests/OpenFeature/ofrep_example.py`).
///
/// The virtual environment lives in `.build/ofrep-venv` and is reused; CI's setup makes it (`.ci/run`), and the
/// test makes it (`python3 -m venv`, `pip install`) when it is missing or holds other versions, and fails, not
/// skips, when that cannot be done. The versions are pinned to those docs/openfeature.md names.
@Suite(.serialized, .hangLimit) struct OFREPStockProviderTests {
    static let program = Repository.path("Tests/OpenFeature/ofrep_example.py")
    /// Kept in step with docs/openfeature.md's "Python" section and `.ci/run`.
    static let packages = ["openfeature-sdk==0.10.0", "openfeature-provider-ofrep==0.3.0"]
    static let venv = PythonVenv("ofrep-venv", packages: packages, imports: ["openfeature.contrib.provider.ofrep"])

    /// The venv's python with both packages importable at their pinned versions; made on first use.
    static func python() throws -> String {
        try venv.prepared()
    }

    @Test func theStockProviderReadsEveryTypeDefaultsAnAbsentKeyAndSeesAChange() async throws {
        let python = try Self.python()
        let rig = try OFREPRig(tcp: true)
        defer { rig.cleanUp() }
        let port = try #require(rig.port)
        let output = rig.daemon.directory.file("example.out")
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        _ = FileManager.default.createFile(atPath: output + ".err", contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Self.program, "--watch", "new_checkout.button_color"]
        var environment = ProcessInfo.processInfo.environment
        environment["OFREP_BASE_URL"] = "http://127.0.0.1:\(port)"
        environment["OFREP_TOKEN"] = OFREPRig.token
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: output + ".err"))
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let text = { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        let waiting = await Eventually.wait(timeout: .seconds(30)) {
            text().contains("waiting for") || !process.isRunning
        }
        let errors = { (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? "" }
        try #require(waiting && process.isRunning, "the example did not reach its watch:\n\(text())\n\(errors())")

        var changed = OFREPRig.checkout
        changed.properties["button_color"] = "red"
        try rig.daemon.writeFlags([changed, OFREPRig.banner, OFREPRig.killed])
        let finished = await Eventually.wait(timeout: .seconds(30)) { !process.isRunning }
        try #require(finished, "the example did not see the change:\n\(text())")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(errors())")

        let lines = text().split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "boolean new_checkout = true (TARGETING_MATCH, variant r_1a2b3c4d)",
                "string  new_checkout.button_color = \"green\" (TARGETING_MATCH, variant r_1a2b3c4d)",
                "integer new_checkout.max_items = 3 (TARGETING_MATCH, variant r_1a2b3c4d)",
                "float   new_checkout.discount = 0.15 (TARGETING_MATCH, variant r_1a2b3c4d)",
                "object  new_checkout.layout = {\"columns\": 2} (TARGETING_MATCH, variant r_1a2b3c4d)",
                "boolean banner = false (DEFAULT, variant default)",
                "boolean no_such_flag = false (default; FLAG_NOT_FOUND: flag 'no_such_flag' was not found)",
                "waiting for new_checkout.button_color to change from \"green\"",
                "string  new_checkout.button_color = \"red\" (TARGETING_MATCH, variant r_1a2b3c4d)",
            ], "\(text())\n\(errors())")
    }
}

import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The stock Python binding (`varlink` from PyPI, nobody here wrote it) calls every method of the daemon's IDL,
/// which it parses from the daemon's own `GetInterfaceDescription`, and streams `Listen`
/// (`Tests/Varlink/varlink_client.py`).
@Suite(.serialized, .hangLimit) struct VarlinkPythonTests {
    static let program = Repository.path("Tests/Varlink/varlink_client.py")

    /// The program's lines by step.
    private static func steps(_ text: String) -> [String: [JSONValue]] {
        var steps: [String: [JSONValue]] = [:]
        for line in text.split(separator: "\n") {
            guard let value = try? JSONValue(parsing: String(line)), let step = value["step"]?.stringValue else {
                continue
            }
            steps[step, default: []].append(value)
        }
        return steps
    }

    @Test func theStockBindingCallsEveryMethodAndStreamsAChange() async throws {
        let python = try VarlinkVenv.python()
        let rig = try VarlinkRig()
        defer { rig.cleanUp() }
        let output = rig.daemon.directory.file("python.out")
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Self.program, rig.socketPath, "all"]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let text = { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        let listening = await Eventually.wait(timeout: .seconds(30)) {
            text().contains(#""step": "listen""#) || !process.isRunning
        }
        try #require(listening && process.isRunning, "the program did not reach Listen:\n\(text())")
        var dark = Fixtures.darkMode
        dark.isEnabled = true
        try rig.daemon.writeFlags([Fixtures.newCheckout, Fixtures.searchV2, dark, Fixtures.holidayBanner])
        let finished = await Eventually.wait(timeout: .seconds(30)) { !process.isRunning }
        try #require(finished, "the program did not see the change:\n\(text())")
        #expect(process.terminationStatus == 0, "\(text())")

        let steps = Self.steps(text())
        let value = { (step: String) in steps[step]?.first?["value"] }
        #expect(value("info")?["interfaces"] == ["org.varlink.service", "io.github.pwflagsd.Flags"])
        #expect(value("get")?["flag"]?["ruleId"] == "r_5e6f7a8b")
        #expect(value("getAll")?["flags"]?.arrayValue?.count == 5)
        #expect(value("refresh")?["fromNetwork"] == false)
        #expect(value("logImpression")?["outcome"] == "logged")
        #expect(value("setUserId")?["userId"] == "from-python")
        #expect(value("setAppState")?["sessionStarted"] != nil)
        #expect(steps["badState"]?.first?["error"] == "org.varlink.service.InvalidParameter")
        #expect(steps["badState"]?.first?["parameters"]?["parameter"] == "state")
        #expect(value("explain")?["rule"] == "matched")
        #expect(value("getStatus")?["userId"] == "from-python")
        let listen = steps["listen"] ?? []
        try #require(listen.count == 2, "\(text())")
        #expect(listen[0]["value"]?["flags"] == Fixtures.wire([Fixtures.darkMode]))
        #expect(listen[1]["value"]?["changed"] == Fixtures.wire([dark]))
    }
}

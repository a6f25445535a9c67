import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The checkout example against a daemon on config/demo-flags.json; its output is quoted in docs/client-library.md.
@Suite(.hangLimit) struct CheckoutExampleTests {
    /// config/demo-flags.json.
    static let demoFlags = Repository.path("config/demo-flags.json")

    /// Runs the example to its end, within a minute (a hang fails the test): its status and what it printed.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let outcome = try Command.run(
            DaemonProcess.executable("checkout-example"), arguments, check: false, timeout: .seconds(60))
        return (outcome.status, outcome.stdout)
    }

    @Test("checkout-example shows the new checkout with the demo flags")
    func showsTheNewCheckout() async throws {
        let daemon = try DaemonProcess(config: "[FeatureFlags]\nLocalFlagsFile=\(Self.demoFlags)\n")
        defer { daemon.cleanUp() }
        let (status, output) = try Self.run(["--socket", daemon.socketPath])
        #expect(status == 0)
        #expect(output == "new checkout: button green, at most 5 items\nsearch: v2\n")
        // The impression was handed over before exit: the local source logs it (the line reaches the test's copy
        // of the daemon's log a moment later, through a pipe; under a sanitizer on a busy machine, not at once).
        let logged = await Eventually.wait { daemon.log.contains("new_checkout") }
        #expect(logged, "\(daemon.log)")
    }

    @Test("checkout-example falls back to the old checkout without a daemon")
    func showsTheDefaultsWithoutADaemon() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (status, output) = try Self.run(["--socket", directory.file("none.sock")])
        #expect(status == 0)
        #expect(output.hasSuffix("old checkout\nsearch: v1\n"))
    }
}

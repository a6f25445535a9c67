import Foundation
import TestSupport
import Testing

/// Every duration, size and count is range-checked where it is parsed: what `--check-config` accepts, the daemon
/// can use, and no value makes it trap at start.
@Suite(.hangLimit) struct ConfigurationRangeTests {
    @Test(arguments: [
        "[OFREP]\nIdleTimeout=1000y\n", "[Daemon]\nMetricsInterval=300y\n", "[FeatureFlags]\nRefreshInterval=11y\n",
        "[Daemon]\nMaxPendingBytes=9223372036854775807\n", "[Daemon]\nMaxConnections=4294967296\n",
        "[OFREP]\nRequestRate=9223372036854775807\n", "[Daemon]\nMaxLineBytes=9223372036854775807\n",
    ])
    func checkConfigRefusesWhatTheDaemonCannotUse(text: String) throws {
        let directory = try TemporaryDirectory(prefix: "pwcfg")
        defer { directory.remove() }
        try directory.write("pwflagsd.conf", text)
        let check = try Command.run(
            DaemonProcess.executable("pwflagsd"), ["--check-config", "--config", directory.file("pwflagsd.conf")],
            check: false)
        #expect(check.status == 1, "\(check)")
        #expect(
            (check.stdout + check.stderr).contains("2147483647")
                || (check.stdout + check.stderr).contains("at most 10y"), "\(check)")
    }

    @Test func theLongestIdleTimeoutStartsAndServes() throws {
        let rig = try OFREPRig(tcp: true, extra: "IdleTimeout=10y\n")
        defer { rig.cleanUp() }
        try rig.expectStillServing()
    }
}

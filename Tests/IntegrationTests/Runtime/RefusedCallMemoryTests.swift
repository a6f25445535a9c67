import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Calls the daemon refuses keep nothing either (docs/reliability.md, Memory kept per call): a user outside
/// `ControlGroups` calling control methods, a member past the rate of state writes, a client past OFREP's
/// `RequestRate`. Each flood comes from `pwflags-bench --flood` run as a user made for the test, since root and
/// the daemon's own user are never refused; the bound is `CallMemoryTests`'.
///
/// On the bus the policy refuses an outsider's calls before they reach the daemon (BusTests); the bus's own
/// rate limit on `SetUserId` is not flooded here.
@Suite(.hangLimit, .enabled(if: getuid() == 0, "creates users and groups: needs root"))
struct RefusedCallMemoryTests {
    /// A flood the daemon refuses: the kind, whether its caller is a member of `ControlGroups`, and how many of
    /// its calls may be answered rather than refused (a rate limit's burst).
    struct Case: Sendable, CustomTestStringConvertible {
        let call: String
        let member: Bool
        let allowed: Int
        var testDescription: String { "\(call) as \(member ? "a member" : "an outsider")" }
    }

    static let cases: [Case] = [
        Case(call: "line.setOverride", member: false, allowed: 0),
        Case(call: "line.pushRegistered", member: false, allowed: 0),
        Case(call: "line.setUserIdChanging", member: true, allowed: 100),
        Case(call: "varlink.SetUserId", member: false, allowed: 0),
        Case(call: "varlink.SetAppState", member: false, allowed: 0),
        Case(call: "ofrep.one", member: false, allowed: 100),
    ]

    @Test(arguments: cases)
    func aRefusedCallKeepsNothing(_ refused: Case) throws {
        let control = try SystemGroup(prefix: "pwfc")
        defer { control.remove() }
        let caller = try SystemUser(prefix: "pwfr", groupNames: refused.member ? [control.name] : [])
        defer { caller.remove() }
        let (daemon, state) = try CallMemoryTests.daemon(extra: {
            "SocketMode=0666\nControlGroups=\(control.name)\n[Varlink]\nSocketPath=\($0.file("varlink.sock"))\n"
                + "[OFREP]\nListenAddress=\($0.file("ofrep.sock"))\nRequestRate=1\n"
        })
        defer {
            daemon.cleanUp()
            state.unmount()
        }
        #expect(chmod(daemon.directory.path, 0o755) == 0)
        let address =
            switch refused.call.prefix(while: { $0 != "." }) {
            case "varlink": daemon.directory.file("varlink.sock")
            case "ofrep": daemon.directory.file("ofrep.sock")
            default: daemon.socketPath
            }
        let count = CallMemoryTests.count
        func flood(_ count: Int) throws -> CallFlood.Tally {
            let outcome = try caller.run(
                DaemonProcess.executable("pwflags-bench"),
                ["--flood", refused.call, "--count", String(count), "--at", address], timeout: .seconds(300))
            return try #require(CallFlood.Tally(printed: outcome.stdout), "\(outcome)")
        }
        // The warm-up spends the burst, so the flood itself is refused throughout.
        _ = try flood(count / 10)
        let tally = try CallMemoryTests.expectKeepsNothing(daemon, refused.testDescription, count: count) {
            try flood(count)
        }
        #expect(tally.answered == count && tally.errors >= count - refused.allowed, "\(tally)")
        // Refused, and still serving.
        #expect(try daemon.connect().call("get", ["key": .string(CallMemoryTests.key)])?["result"]?["flag"] != nil)
    }
}

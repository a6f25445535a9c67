import FlagsCore
import Foundation
import TestSupport
import Testing

/// Calls made while Pushwoosh is slow keep nothing once answered (docs/reliability.md, Memory kept per call):
/// refreshes from clients that hang up before the answer, each waiting on a request that takes a second (no
/// throttle, so they join one request after another), refreshes an app repeats meanwhile (the throttle
/// answers them at once), user changes that each supersede the request in flight, impressions whose reports
/// wait, and reads. The count is smaller than `CallMemoryTests`'; the bound is the same, at least 1 MiB.
@Suite(.hangLimit)
struct SlowUpstreamCallMemoryTests {
    static let count = Sanitizer.isActive ? 200 : 2_000
    static let calls = [
        "line.refresh", "line.refreshHangUp", "line.setUserIdChanging", "line.logImpression", "line.status",
        "line.get", "varlink.Refresh", "varlink.RefreshHangUp",
    ]

    @Test(arguments: calls)
    func aCallWhileTheUpstreamIsSlowKeepsNothing(_ name: String) async throws {
        let call = try #require(FloodCall.named(name, key: "new_checkout"))
        let varlink = try TemporaryDirectory()
        defer { varlink.remove() }
        let rig = try PushwooshRig.start(
            daemon: { server in
                let config = PushwooshConfig.text(
                    serverURL: server.baseURL.absoluteString, pushwoosh: ["RequestTimeout": "5s"],
                    featureFlags: call.manner == .hangUp ? ["RefreshThrottle": "0"] : [:])
                return try DaemonProcess(
                    config: config + "[Varlink]\nSocketPath=\(varlink.file("varlink.sock"))\n")
            },
            replies: { server in
                server.setDefaultReply(.delay(.seconds(1), then: .flags([Fixtures.checkout])), for: "getFeatureFlags")
                server.setDefaultReply(.delay(.seconds(1), then: .ok), for: "postEvent")
            })
        defer { rig.stop() }
        let session = try rig.session()
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let address = call.surface == .varlink ? varlink.file("varlink.sock") : rig.daemon.socketPath
        let count = call.writesState ? Self.count / 10 : Self.count
        _ = try CallFlood.run(call, count: count / 10, at: address)
        let tally = try CallMemoryTests.expectKeepsNothing(rig.daemon, "\(name), upstream slow", count: count) {
            try CallFlood.run(call, count: count, at: address)
        }
        #expect(tally.answered == count, "\(tally)")
        // After a change of user, once the new user's flags arrive (R8d: the previous user's are gone at once).
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session), "the daemon lost its flags")
    }
}

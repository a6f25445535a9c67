import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `listen` reply and every `flagsChanged` carry `expiresAt`, as `status` reports it: a subscriber learns the
/// age of its flags with them, without a `status` round trip per notification.
@Suite(.hangLimit) struct ExpiryNoticeTests {
    @Test("With the local file, listen's reply and each flagsChanged carry expiresAt null (never expires)")
    func localFileNeverExpires() throws {
        let daemon = try DaemonProcess.serving([Fixtures.banner])
        defer { daemon.cleanUp() }
        let listener = try daemon.connect()
        let reply = try #require(try listener.call("listen")?["result"]?.objectValue)
        #expect(reply["expiresAt"] == .null)
        try daemon.writeFlags([Fixtures.banner, Fixtures.search])
        let change = try #require(listener.readNotification())
        #expect(change.objectValue?["expiresAt"] == .null)
        #expect(FlagsChanged(params: change)?.expiresAt == .some(.null))
    }

    @Test("With Pushwoosh, listen's reply and each flagsChanged carry the expiresAt status reports")
    func pushwooshExpiry() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["DisableThrottle": "yes", "CacheMaxAge": "2h"]) {
            $0.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
            $0.setDefaultReply(.flags([Fixtures.checkout, Fixtures.search]), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let daemon = rig.daemon
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let client = try daemon.connect()
        let listener = try daemon.connect()
        let listing = try listener.listing("listen")
        let before = try #require(try client.call("status")?["result"]?["expiresAt"])
        #expect(before.stringValue != nil)
        #expect(listing.expiresAt == before)

        // A fetch that changes the flags: the notification carries the new age.
        _ = try client.call("refresh")
        let change = try listener.nextChange()
        let after = try #require(try client.call("status")?["result"]?["expiresAt"])
        #expect(change.expiresAt == after)
        let expiry = try #require(after.stringValue.flatMap { try? Date.ISO8601FormatStyle().parse($0) })
        #expect(abs(expiry.timeIntervalSinceNow - 7200) < 60)
    }
}

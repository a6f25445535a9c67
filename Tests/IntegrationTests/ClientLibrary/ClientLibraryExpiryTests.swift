import Dispatch
import FlagsCore
import Foundation
import TestSupport
import Testing
import UnixIO

@testable import FeatureFlags

#if canImport(Glibc)
    import Glibc
#endif

/// R15 end to end: the daemon goes away, the mirror's clock passes `expiresAt`, the flags go.
@Suite(.hangLimit) struct ClientLibraryExpiryTests {
    @Test("R15: while the daemon is away the mirror serves its flags until expiresAt, then none, and tells listeners")
    func mirrorExpiresWhileDisconnected() async throws {
        let rig = try PushwooshRig.start(
            daemon: {
                try DaemonProcess(config: "[Pushwoosh]\nApplicationCode=ABCDE-12345\nServerURL=\($0.baseURL)\n")
            },
            replies: {
                $0.setDefaultReply(
                    .flags([Flag(key: "new_checkout", isEnabled: true, ruleId: "r_1")]), for: "getFeatureFlags")
            })
        defer { rig.stop() }
        let daemon = rig.daemon
        // The injected clock: the test moves it a day on instead of waiting for one.
        let clock = Locked(Date())
        let timing = MirrorTiming(
            initialBackoff: .milliseconds(20), maximumBackoff: .milliseconds(100), now: { clock.withLock { $0 } })
        let flags = FeatureFlags(socketPath: daemon.socketPath, timing: timing)
        defer { flags.stop() }
        #expect(await flags.waitUntil { $0.get("new_checkout") != nil })
        // A refresh answers once the daemon recorded the fetch, and the library reads the age right after.
        try await flags.refresh()
        let expiresAt = try #require(flags.expiresAt)
        let listener = RecordingListener()
        flags.addUpdateListener(listener, queue: DispatchQueue(label: "test.expiry"))

        daemon.stop()
        clock.withLock { $0 = expiresAt - 1 }
        #expect(flags.get("new_checkout") != nil)
        clock.withLock { $0 = expiresAt }
        #expect(await listener.nextCall())
        #expect(flags.get("new_checkout") == nil)
        #expect(!flags.isEnabled("new_checkout", default: false))
        #expect(!flags.isConnected)
    }
}

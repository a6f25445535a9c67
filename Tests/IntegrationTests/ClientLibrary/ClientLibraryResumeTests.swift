import Dispatch
import FlagsCore
import Foundation
import TestSupport
import Testing

@testable import FeatureFlags

/// The client library across daemon restarts: the new epoch makes it take the listing, and listeners hear only
/// what really changed.
@Suite(.serialized, .hangLimit) struct ClientLibraryResumeTests {
    static let fast = MirrorTiming(initialBackoff: .milliseconds(20), maximumBackoff: .milliseconds(200))

    /// Starts a mirror of `daemon` with a listener added after its first snapshot.
    static func mirror(_ daemon: DaemonProcess) async throws -> (FeatureFlags, RecordingListener) {
        let flags = FeatureFlags(socketPath: daemon.socketPath, timing: fast)
        #expect(await flags.waitForFirstSnapshot(timeout: .seconds(15)))
        let listener = RecordingListener()
        flags.addUpdateListener(listener, queue: DispatchQueue(label: "test.resume"))
        return (flags, listener)
    }

    @Test("A daemon restart with the same flags tells no listener; the next change tells it once")
    func restartWithTheSameFlagsIsQuiet() async throws {
        let first = try DaemonProcess.serving([Fixtures.checkout, Fixtures.banner])
        defer { first.directory.remove() }
        let (flags, listener) = try await Self.mirror(first)
        defer { flags.stop() }
        let before = try #require(flags.store.current.resumePoint)

        let second = try first.restarted()
        defer { _ = second.stop() }
        // Reconnected once the mirror stands at the new daemon's epoch (revision 1 again).
        #expect(await Eventually.wait(timeout: .seconds(15)) { flags.store.current.resumePoint?.epoch != before.epoch })
        #expect(flags.store.current.resumePoint?.revision == 1)
        try second.writeFlags([Fixtures.checkout])
        #expect(await listener.nextCall())
        #expect(flags.get("banner") == nil)
        #expect(listener.callCount == 1)
    }

    @Test("A daemon restart with changed flags tells each listener once, with only what changed")
    func restartWithChangedFlagsTellsOnce() async throws {
        let first = try DaemonProcess.serving([Fixtures.checkout, Fixtures.banner])
        defer { first.directory.remove() }
        let (flags, listener) = try await Self.mirror(first)
        defer { flags.stop() }
        let updates = flags.updates()

        _ = first.stop()
        try first.writeFlags([Fixtures.checkout, Fixtures.search])
        let second = try DaemonProcess(config: LocalFlags.config(in: first.directory), directory: first.directory)
        defer { _ = second.stop() }
        #expect(await listener.nextCall())
        let update = await withDeadline(.seconds(10)) { await updates.first { _ in true } }
        #expect(update?.changed.map(\.key) == ["search_v2"])
        #expect(update?.removed == ["banner"])
        #expect(flags.get("search_v2") != nil && flags.get("banner") == nil)
        #expect(!(await listener.nextCall(timeout: .milliseconds(300))))
        #expect(listener.callCount == 1)
    }
}

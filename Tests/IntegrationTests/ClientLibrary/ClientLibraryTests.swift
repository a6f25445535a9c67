import Dispatch
import FeatureFlagsCompat
import FlagsCore
import Foundation
import TestSupport
import Testing
import UnixIO

@testable import FeatureFlags

#if canImport(Glibc)
    import Glibc
#endif

/// The client library against the real daemon on the local flags file: mirror, listeners, restarts.
@Suite(.serialized, .hangLimit) struct ClientLibraryTests {
    /// As the daemon serves them from the local file (which is why they say so).
    static let checkout = Flag(
        key: "new_checkout", isEnabled: true, ruleId: "r_1a2b3c4d", properties: ["button_color": "green"],
        source: .file)
    static let banner = Flag(key: "banner", isEnabled: false, ruleId: "default", source: .file)
    /// Short backoff so a restart is noticed in milliseconds.
    static let fast = MirrorTiming(initialBackoff: .milliseconds(20), maximumBackoff: .milliseconds(200))

    /// A daemon serving `flags` from `flags.json` in `directory` (a new one when nil).
    static func startDaemon(_ flags: [Flag], directory: TemporaryDirectory? = nil) throws -> DaemonProcess {
        let directory = try directory ?? TemporaryDirectory()
        try directory.write("flags.json", FlagsFile.text(flags))
        return try DaemonProcess(
            config: "[FeatureFlags]\nLocalFlagsFile=\(directory.file("flags.json"))\n", directory: directory)
    }

    @Test("Before the first snapshot get is nil and isEnabled the default; an unreachable daemon is code 0")
    func noDaemon() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let flags = FeatureFlags(socketPath: directory.file("none.sock"), timing: Self.fast)
        defer { flags.stop() }
        #expect(flags.get("new_checkout") == nil)
        #expect(flags.isEnabled("new_checkout", default: true))
        #expect(!flags.isEnabled("new_checkout", default: false))
        #expect(await !flags.waitForFirstSnapshot(timeout: .milliseconds(100)))
        await #expect {
            try await flags.refresh()
        } throws: { error in
            let nsError = error as NSError
            return nsError.domain == PWFeatureFlagsErrorDomain && nsError.code == 0
        }
    }

    @Test("The mirror shows the first snapshot, then converges after each change of the file")
    func convergesAfterFileChanges() async throws {
        let daemon = try Self.startDaemon([Self.checkout, Self.banner])
        defer { daemon.cleanUp() }
        let flags = FeatureFlags(socketPath: daemon.socketPath)
        defer { flags.stop() }
        #expect(await flags.waitForFirstSnapshot(timeout: .seconds(15)))
        #expect(flags.get("new_checkout") == FeatureFlag(Self.checkout))
        #expect(flags.isEnabled("new_checkout", default: false))
        #expect(flags.get("New_Checkout") == nil)
        #expect(flags.expiresAt == nil)

        var disabled = Self.checkout
        disabled.isEnabled = false
        disabled.properties = ["button_color": "blue"]
        try daemon.directory.write("flags.json", FlagsFile.text([disabled]))
        let expected = FeatureFlag(disabled)
        #expect(await flags.waitUntil { $0.get("new_checkout") == expected && $0.get("banner") == nil })
        #expect(!flags.isEnabled("new_checkout", default: true))
        #expect(flags.get("new_checkout")?.string(forProperty: "button_color", default: nil) == "blue")

        try daemon.directory.write("flags.json", FlagsFile.text([]))
        #expect(await flags.waitUntil { $0.all.isEmpty })
        #expect(flags.isEnabled("new_checkout", default: true))
    }

    @Test("After a daemon restart the mirror reconciles and listeners are told; the flags stay meanwhile")
    func reconcilesAfterRestart() async throws {
        let first = try Self.startDaemon([Self.checkout])
        let directory = first.directory
        defer { directory.remove() }
        let flags = FeatureFlags(socketPath: first.socketPath, timing: Self.fast)
        defer { flags.stop() }
        #expect(await flags.waitForFirstSnapshot(timeout: .seconds(15)))
        let listener = RecordingListener()
        flags.addUpdateListener(listener, queue: DispatchQueue(label: "test.restart"))

        first.stop()
        // Kept while the daemon is away: the local file's flags never expire.
        #expect(flags.get("new_checkout") == FeatureFlag(Self.checkout))
        var moved = Self.checkout
        moved.ruleId = "r_99"
        let second = try Self.startDaemon([moved, Self.banner], directory: directory)
        defer { second.stop() }

        #expect(await listener.nextCall())
        #expect(flags.get("new_checkout")?.ruleId == "r_99")
        #expect(flags.get("banner") == FeatureFlag(Self.banner))
        #expect(flags.isConnected)
    }

    @Test("A released listener is never called, while a live one hears the same change")
    func releasedListenerIsNeverCalled() async throws {
        let daemon = try Self.startDaemon([Self.checkout])
        defer { daemon.cleanUp() }
        let flags = FeatureFlags(socketPath: daemon.socketPath)
        defer { flags.stop() }
        #expect(await flags.waitForFirstSnapshot(timeout: .seconds(15)))
        let queue = DispatchQueue(label: "test.listeners")
        let releasedCalls = Locked(0)
        var released: RecordingListener? = RecordingListener { releasedCalls.withLock { $0 += 1 } }
        #if compiler(>=6.2)
            weak let releasedReference = released
        #else
            // Before Swift 6.2 a weak reference cannot be a `let`.
            weak var releasedReference = released
        #endif
        if let released { flags.addUpdateListener(released, queue: queue) }
        let alive = RecordingListener()
        flags.addUpdateListener(alive, queue: queue)
        released = nil
        #expect(releasedReference == nil)

        try daemon.directory.write("flags.json", FlagsFile.text([Self.banner]))
        #expect(await alive.nextCall())
        // Both calls were queued on `queue` by the same update: once it drained, the released one had its turn.
        queue.sync {}
        #expect(releasedCalls.withLock { $0 } == 0)
        #expect(alive.callCount == 1)
        #expect(flags.get("banner") != nil)
    }

    @Test("Listeners run on the queue they were added with, after the mirror shows the change; removed ones stop")
    func callbacksArriveOnTheRequestedQueue() async throws {
        let daemon = try Self.startDaemon([Self.checkout])
        defer { daemon.cleanUp() }
        let flags = FeatureFlags(socketPath: daemon.socketPath)
        defer { flags.stop() }
        #expect(await flags.waitForFirstSnapshot(timeout: .seconds(15)))
        let queue = DispatchQueue(label: "test.callbacks")
        queue.setSpecific(key: RecordingListener.queueKey, value: "test.callbacks")
        let seen = Locked<FeatureFlag?>(nil)
        let listener = RecordingListener {
            dispatchPrecondition(condition: .onQueue(queue))
            seen.withLock { $0 = flags.get("banner") }
        }
        flags.addUpdateListener(listener, queue: queue)

        try daemon.directory.write("flags.json", FlagsFile.text([Self.checkout, Self.banner]))
        #expect(await listener.nextCall())
        #expect(listener.calls.withLock { $0 } == ["test.callbacks"])
        #expect(seen.withLock { $0 } == FeatureFlag(Self.banner))

        flags.removeUpdateListener(listener)
        try daemon.directory.write("flags.json", FlagsFile.text([Self.checkout]))
        #expect(await flags.waitUntil { $0.get("banner") == nil })
        queue.sync {}
        #expect(listener.callCount == 1)
    }

    @Test("An identical rewrite of the file tells no one (R9)")
    func identicalContentNotifiesNoOne() async throws {
        let daemon = try Self.startDaemon([Self.checkout])
        defer { daemon.cleanUp() }
        let flags = FeatureFlags(socketPath: daemon.socketPath)
        defer { flags.stop() }
        #expect(await flags.waitForFirstSnapshot(timeout: .seconds(15)))
        let queue = DispatchQueue(label: "test.identical")
        let listener = RecordingListener()
        flags.addUpdateListener(listener, queue: queue)
        try daemon.directory.write("flags.json", FlagsFile.text([Self.checkout]))
        // A change after the identical write is the marker that the identical one was processed.
        try daemon.directory.write("flags.json", FlagsFile.text([Self.banner]))
        #expect(await listener.nextCall())
        queue.sync {}
        #expect(listener.callCount == 1)
    }
}

import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Subscriptions that name every key of the largest flag set the daemon accepts, never read, hold what
/// docs/reliability.md ("Subscriptions that never read") says they may: their first replies share the set's
/// encoded bytes instead of each copying them.
@Suite(.hangLimit) struct SubscriptionFloodTests {
    static let flagCount = 1_000

    /// 1,000 flags with a property of 7,700 bytes each: 7.8 MB listed, under the 8 MiB file limit.
    static func fileText() -> String {
        let blob = String(repeating: "x", count: 7_700)
        let entries = (0..<flagCount).map { index in
            #"{"key":"\#(key(index))","enabled":true,"rule_id":"r","properties":{"blob":"\#(blob)"}}"#
        }
        return #"{"flags":["# + entries.joined(separator: ",") + #"],"partial":false}"#
    }

    static func key(_ index: Int) -> String { "k_\(index)" }

    /// Connections a member could hold on each socket: 240 of the default 256 (the rest are kept for root and
    /// the daemon's user). Root opens them here; its connections are counted the same.
    static let perSurface = 240

    /// 240 line `listen` and 240 Varlink `Listen` calls naming all 1,000 keys of a 7.8 MB set, none ever read:
    /// the daemon stays under 256 MiB of anonymous memory (it reached 3.8 GB when each first reply was a copy).
    @Test func subscriptionsToEveryKeyOfANearLimitSetShareItsBytes() async throws {
        let directory = try TemporaryDirectory()
        try directory.write(LocalFlags.fileName, Self.fileText())
        let varlinkPath = directory.file("varlink.sock")
        let daemon = try DaemonProcess(
            config: LocalFlags.config(in: directory, extra: "[Varlink]\nSocketPath=\(varlinkPath)\n"),
            directory: directory)
        defer { daemon.cleanUp() }
        let status = try #require(try daemon.connect().call("status")?["result"])
        #expect(status["flags"]?.integerValue == Self.flagCount, "\(status)")
        let pid = daemon.process.processIdentifier
        let idle = try #require(Measure.settledAnonymousKiB(pid: pid))

        let keys = (0..<Self.flagCount).map { Self.key($0) }
        var listen: [UInt8] = []
        JSONValue.object([
            "id": 1, "method": "listen", "params": ["keys": .array(keys.map { .string($0) })],
        ]).write(to: &listen)
        listen.append(0x0A)
        let varlinkListen = VarlinkClient.message("Listen", ["keys": .array(keys.map { .string($0) })], more: true)
        var descriptors: [Int32] = []
        var clients: [AnyObject] = []
        for _ in 0..<Self.perSurface {
            let line = try RawClient(socketPath: daemon.socketPath)
            try line.send(listen)
            let varlink = try VarlinkClient(socketPath: varlinkPath)
            try varlink.send(varlinkListen)
            descriptors += [line.fd, varlink.fd]
            clients += [line, varlink]
        }
        // Every call was answered: the first bytes of each reply wait in its socket, unread.
        let answered = await Eventually.wait(timeout: .seconds(120)) {
            descriptors.allSatisfy { Self.unread(on: $0) > 0 }
        }
        #expect(answered, "\(descriptors.filter { Self.unread(on: $0) == 0 }.count) calls not answered")
        let held = try #require(Measure.settledAnonymousKiB(pid: pid))
        print(
            "\(Self.perSurface) line and \(Self.perSurface) Varlink subscriptions to every key of a 7.8 MB set: "
                + "RssAnon \(idle) KiB before, \(held) KiB held")
        if !Sanitizer.isActive {
            #expect(held < 256 << 10, "RssAnon \(held) KiB")
        }
        // The daemon still answers others at once.
        #expect(try daemon.connect().call("get", ["key": "k_7"])?["result"]?["flag"] != nil)
        withExtendedLifetime(clients) {}
    }

    /// The bytes waiting to be read on `fd`.
    static func unread(on fd: Int32) -> Int32 {
        var count: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &count) == 0 ? count : 0
    }
}

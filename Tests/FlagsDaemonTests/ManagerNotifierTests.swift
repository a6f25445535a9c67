import Foundation
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The `$NOTIFY_SOCKET` forms libsystemd accepts: a path, or `@` for an abstract name; the backlog kept while
/// the manager does not read.
@Suite(.hangLimit) struct ManagerNotifierTests {
    @Test("An abstract NOTIFY_SOCKET (@name) receives the message")
    func abstractSocket() throws {
        let name = "pwflagsd-test-\(UInt32.random(in: 0..<UInt32.max))"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        let address = try #require(ManagerNotifier.socketAddress("@" + name))
        let bound = address.bytes.withUnsafeBytes { raw in
            bind(fd, raw.baseAddress?.assumingMemoryBound(to: sockaddr.self), address.length)
        }
        try #require(bound == 0)
        ManagerNotifier(environment: ["NOTIFY_SOCKET": "@" + name]).send("READY=1\nSTATUS=test")
        var buffer = [UInt8](repeating: 0, count: 256)
        let size = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        #expect(size > 0 && String(decoding: buffer[0..<size], as: UTF8.self) == "READY=1\nSTATUS=test")
    }

    @Test("Addresses: a path has its terminating zero, an abstract name none; other forms are refused")
    func addresses() throws {
        let path = try #require(ManagerNotifier.socketAddress("/run/systemd/notify"))
        #expect(Int(path.length) == MemoryLayout<sa_family_t>.size + "/run/systemd/notify".utf8.count + 1)
        let abstract = try #require(ManagerNotifier.socketAddress("@n"))
        #expect(Int(abstract.length) == MemoryLayout<sa_family_t>.size + 2)
        #expect(ManagerNotifier.socketAddress("vsock:2:1234") == nil)
        #expect(ManagerNotifier.socketAddress("relative") == nil)
        #expect(ManagerNotifier.socketAddress("/" + String(repeating: "x", count: 200)) == nil)
    }

    /// Sends `READY=1`, what `fill` sends and then `last` while the manager's queue is full and no thread can be
    /// started; then lets threads start and sends `STATUS=newest`. Returns what the manager received, and how
    /// often a thread was asked for before threads could be had.
    private static func throughAFullQueue(
        fill: (ManagerNotifier) -> Void, last: String
    ) throws -> (received: [String], threadCalls: Int) {
        let manager = try FullManagerSocket()
        defer { manager.close() }
        let starter = FlakyThreadStarter()
        let notifier = ManagerNotifier(environment: ["NOTIFY_SOCKET": manager.path], startThread: starter.start)
        notifier.send("READY=1")
        fill(notifier)
        notifier.send(last)
        let threadCalls = starter.calls
        starter.works = true
        notifier.send("STATUS=newest")
        return (manager.drain(until: "STATUS=newest"), threadCalls)
    }

    @Test("With no thread to be had, an ordinary status tries again: the newest status arrives, statuses coalesced")
    func aStatusRetriesTheThreadAndIsNeverLost() throws {
        // Everything joins the backlog, past its limit.
        let (received, threadCalls) = try Self.throughAFullQueue(
            fill: { notifier in
                for index in 1...(ManagerNotifier.backlogLimit * 2) {
                    notifier.send("STATUS=status \(index)")
                    notifier.send("WATCHDOG=1")
                }
            }, last: "RELOADING=1")
        #expect(threadCalls > 2 * ManagerNotifier.backlogLimit, "every message tried to start the thread")
        // Threads could be had again; the next message, an ordinary status, started the worker.
        #expect(received.last == "STATUS=newest", "\(received)")
        // In order, each kind once: the queued READY=1 first, one ping, RELOADING=1, then the newest status.
        #expect(received == ["READY=1", "WATCHDOG=1", "RELOADING=1", "STATUS=newest"], "\(received)")
    }

    @Test("Past the limit a status pushes out the oldest waiting status or ping, never a state change")
    func theBacklogStaysBounded() throws {
        // Distinct fields each time, so nothing coalesces: the limit is what bounds them.
        let (received, _) = try Self.throughAFullQueue(
            fill: { notifier in
                for index in 1...(ManagerNotifier.backlogLimit * 2) { notifier.send("X_PWFLAGSD_\(index)=1") }
            }, last: "STOPPING=1")
        let states: Set = ["READY=1", "STOPPING=1"]
        #expect(received.count { !states.contains($0) } <= ManagerNotifier.backlogLimit, "\(received.count)")
        #expect(received.first == "READY=1")
        #expect(received.contains("X_PWFLAGSD_\(ManagerNotifier.backlogLimit * 2)=1"), "the newest are kept")
        #expect(!received.contains("X_PWFLAGSD_1=1"), "the oldest went")
        #expect(received.suffix(2) == ["STOPPING=1", "STATUS=newest"], "\(received)")
    }
}

/// A thread starter that fails until `works` is set, counting the times it was asked.
private final class FlakyThreadStarter: Sendable {
    private let state = Locked((works: false, calls: 0))

    var works: Bool {
        get { state.withLock { $0.works } }
        set { state.withLock { $0.works = newValue } }
    }

    var calls: Int { state.withLock { $0.calls } }

    func start(name: String, body: @escaping @Sendable () -> Void) -> Bool {
        let works = state.withLock { state -> Bool in
            state.calls += 1
            return state.works
        }
        return works && DetachedThread.start(name: name, body)
    }
}

/// A manager's notify socket whose queue the test has filled: the daemon's next send finds it full.
private final class FullManagerSocket {
    let path: String
    private let fd: Int32
    private let directory: TemporaryDirectory
    private var fillers = 0

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.file("notify")
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        let address = try #require(ManagerNotifier.socketAddress(path))
        let bound = address.bytes.withUnsafeBytes { raw in
            bind(fd, raw.baseAddress?.assumingMemoryBound(to: sockaddr.self), address.length)
        }
        try #require(bound == 0)
        let sender = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { Glibc.close(sender) }
        while true {
            let sent = address.bytes.withUnsafeBytes { raw in
                "filler".withCString { text in
                    sendto(
                        sender, text, 6, Int32(MSG_DONTWAIT), raw.baseAddress?.assumingMemoryBound(to: sockaddr.self),
                        address.length)
                }
            }
            guard sent == 6 else { break }
            fillers += 1
        }
        try #require(errno == EAGAIN && fillers > 0, "the queue never filled")
    }

    /// Reads every message, the fillers left out, until one is `last` or 10 s passed.
    func drain(until last: String) -> [String] {
        var received: [String] = []
        let deadline = ContinuousClock.now + .seconds(10)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline, received.last != last {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let size = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard size > 0 else { continue }
            let text = String(decoding: buffer[0..<size], as: UTF8.self)
            if text != "filler" { received.append(text) }
        }
        return received
    }

    func close() {
        Glibc.close(fd)
        directory.remove()
    }
}

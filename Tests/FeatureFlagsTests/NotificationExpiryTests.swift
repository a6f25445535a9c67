import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing
import UnixIO

@testable import FeatureFlags

#if canImport(Glibc)
    import Glibc
#endif

/// The mirror takes the flags' age from the `listen` reply and each `flagsChanged`: no `status` round trip per
/// notification. A fake daemon on a Unix socket answers and counts every request.
@Suite(.hangLimit) struct NotificationExpiryTests {
    init() {
        signal(SIGPIPE, SIG_IGN)
    }

    static func flag(_ revision: Int) -> JSONValue {
        ["key": "v", "enabled": true, "ruleId": .string("r\(revision)"), "properties": [:]]
    }

    static func expiry(_ day: Int) -> String { "2030-01-0\(day)T00:00:00Z" }

    @Test("listen's expiresAt and each flagsChanged's are the mirror's, without any status call")
    func expiryComesWithTheNotifications() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try FakeDaemon(path: directory.file("d.sock")) { method, id in
            switch method {
            case "listen":
                let listing: JSONValue = [
                    "subscription": "s1", "expiresAt": .string(Self.expiry(1)), "revision": 1, "flags": [Self.flag(1)],
                ]
                var lines = [JSONValue.object(["jsonrpc": "2.0", "id": id, "result": listing]).serialized()]
                for revision in 2...6 {
                    let params: JSONValue = [
                        "subscription": "s1", "revision": .number(Double(revision)),
                        "expiresAt": .string(Self.expiry(revision)), "changed": [Self.flag(revision)], "removed": [],
                    ]
                    lines.append(
                        JSONValue.object(["jsonrpc": "2.0", "method": "flagsChanged", "params": params]).serialized())
                }
                return lines
            case "status":
                // Not the notifications' age: a mirror that asked would show this one.
                return [
                    JSONValue.object(["jsonrpc": "2.0", "id": id, "result": ["expiresAt": "2031-01-01T00:00:00Z"]])
                        .serialized()
                ]
            default:
                return [JSONValue.object(["jsonrpc": "2.0", "id": id, "result": [:]]).serialized()]
            }
        }
        defer { daemon.stop() }
        let flags = FeatureFlags(socketPath: daemon.path, timing: .standard)
        defer { flags.stop() }
        let last = try Date.ISO8601FormatStyle().parse(Self.expiry(6))
        let settled = await Eventually.wait(timeout: .seconds(10)) {
            flags.get("v")?.ruleId == "r6" && flags.expiresAt == last
        }
        #expect(
            settled,
            "flag \(String(describing: flags.get("v")?.ruleId)), expiresAt \(String(describing: flags.expiresAt))")
        #expect(daemon.methods == ["listen"])
    }
}

extension NotificationExpiryTests {
    @Test("A daemon that sends no expiresAt with its notifications is asked with status, as before")
    func olderDaemonIsAskedWithStatus() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try FakeDaemon(path: directory.file("d.sock")) { method, id in
            let result: JSONValue =
                switch method {
                case "listen": ["subscription": "s1", "revision": 1, "flags": [Self.flag(1)]]
                case "status": ["expiresAt": "2031-01-01T00:00:00Z"]
                default: [:]
                }
            return [JSONValue.object(["jsonrpc": "2.0", "id": id, "result": result]).serialized()]
        }
        defer { daemon.stop() }
        let flags = FeatureFlags(socketPath: daemon.path, timing: .standard)
        defer { flags.stop() }
        let expected = try Date.ISO8601FormatStyle().parse("2031-01-01T00:00:00Z")
        #expect(await Eventually.wait(timeout: .seconds(10)) { flags.expiresAt == expected })
        #expect(daemon.methods == ["listen", "status"])
    }
}

/// A daemon stand-in: accepts connections, answers each request line with the lines `answer` returns, and
/// records the methods called (and their params).
final class FakeDaemon: Sendable {
    let path: String
    private let listener: Int32
    private let state = Locked<(methods: [String], stopped: Bool)>(([], false))
    private let served = Locked<(params: [JSONValue], connections: Set<Int32>)>(([], []))
    private let answer: @Sendable (String, JSONValue) -> [String]

    init(path: String, answer: @escaping @Sendable (String, JSONValue) -> [String]) throws {
        self.path = path
        self.answer = answer
        listener = try UnixSocket.listen(at: path, mode: 0o600)
        Thread { [self] in acceptLoop() }.start()
    }

    var methods: [String] { state.withLock { $0.methods } }

    /// The params of every request, in order (null for none).
    var params: [JSONValue] { served.withLock { $0.params } }

    /// Ends every open connection, as a daemon whose client fell too far behind would.
    func dropConnections() {
        served.withLock { served in
            for fd in served.connections { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    func stop() {
        state.withLock { $0.stopped = true }
        unlink(path)
    }

    private var stopped: Bool { state.withLock { $0.stopped } }

    private func acceptLoop() {
        defer { close(listener) }
        while !stopped {
            var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            Thread { [self] in serve(fd) }.start()
        }
    }

    private func serve(_ fd: Int32) {
        served.withLock { _ = $0.connections.insert(fd) }
        defer {
            served.withLock { _ = $0.connections.remove(fd) }
            close(fd)
        }
        let reader = LineReader(fd: fd)
        while !stopped {
            guard let line = reader.readLine(timeout: .milliseconds(100)) else {
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                // Closed by the client, or nothing yet.
                if poll(&descriptor, 1, 0) > 0, descriptor.revents & Int16(POLLHUP) != 0 { return }
                continue
            }
            guard let request = try? JSONValue(parsing: Array(line.utf8)),
                let method = request["method"]?.stringValue, let id = request["id"]
            else { continue }
            state.withLock { $0.methods.append(method) }
            served.withLock { $0.params.append(request["params"] ?? .null) }
            for reply in answer(method, id) {
                guard (try? UnixSocket.writeAll(fd, Array((reply + "\n").utf8))) != nil else { return }
            }
        }
    }
}

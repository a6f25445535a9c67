import Foundation
import PWFlagsTestKit
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The loads the benchmark puts on a socket: the daemon's and the echo floor's alike.
enum Load {
    /// One client, one request at a time: the latency of each round trip, in nanoseconds.
    static func sequential(path: String, request: [UInt8], count: Int) throws -> [UInt64] {
        let client = try LineClient(path: path)
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        for _ in 0..<(count / 10) {
            try client.send(request)
            client.readLine()
        }
        for _ in 0..<count {
            let start = MonotonicClock.nanoseconds()
            try client.send(request)
            guard client.readLine() != nil else { break }
            samples.append(MonotonicClock.nanoseconds() - start)
        }
        return samples
    }

    /// `clients` connections, each keeping `depth` requests in flight until it has had `perClient` answers:
    /// answers per second over all of them.
    static func pipelined(path: String, request: [UInt8], clients: Int, depth: Int, perClient: Int) throws -> Double {
        let connections = try (0..<clients).map { _ in try LineClient(path: path) }
        let group = DispatchGroup()
        let start = MonotonicClock.nanoseconds()
        for connection in connections {
            let box = UncheckedBox(connection)
            DispatchQueue.global().async(group: group) {
                let client = box.value
                let burst = Array([[UInt8]](repeating: request, count: depth).joined())
                do {
                    try client.send(burst)
                    var sent = depth
                    var received = 0
                    while received < perClient {
                        guard client.readLine() != nil else { return }
                        received += 1
                        if sent < perClient {
                            try client.send(request)
                            sent += 1
                        }
                    }
                } catch {
                    return
                }
            }
        }
        group.wait()
        let seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
        return Double(clients * perClient) / seconds
    }

    /// Waits until every client has a line to read; returns the moment the last one had it.
    static func waitForLine(on clients: [LineClient], timeout: Double = 30) -> UInt64? {
        var pending = Set(clients.indices.filter { !clients[$0].hasBufferedLine })
        var last = MonotonicClock.nanoseconds()
        let deadline = MonotonicClock.nanoseconds() + UInt64(timeout * 1e9)
        while !pending.isEmpty {
            let order = Array(pending)
            guard let ready = Descriptor.waitReadable(order.map { clients[$0].fd }, milliseconds: 1000) else {
                return nil
            }
            for index in ready.map({ order[$0] }) {
                guard clients[index].fill() else { return nil }
                if clients[index].hasBufferedLine {
                    pending.remove(index)
                    last = MonotonicClock.nanoseconds()
                }
            }
            if MonotonicClock.nanoseconds() > deadline { return nil }
        }
        return last
    }
}

/// Hands a non-Sendable client to the one thread that uses it.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

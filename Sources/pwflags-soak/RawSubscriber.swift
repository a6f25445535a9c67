import FlagsCore
import Foundation
import PWFlagsTestKit
import Synchronization
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A `listen` subscription on a raw connection, with or without keys, that applies each `flagsChanged` to its
/// snapshot by the rules of docs/protocol.md, written out here again rather than taken from the
/// client library.
///
/// A slow one reads only now and then, letting notifications pile up at the daemon. Every state it reaches is
/// recorded as (revision, digest) for the final check against the history; a subscriber of every key must see
/// every revision, each exactly one more than the last.
final class RawSubscriber: SoakSubscriber {
    let name: String
    /// The keys it listens to; nil for every key.
    let keys: [String]?
    let slow: Bool
    private let keySet: Set<String>?
    private let socketPath: String
    private let tally: Tally
    private let seed: UInt64
    private let closing = Atomic<Bool>(false)
    private let ready = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let state = Locked(Published())

    /// What the reading thread shows the others.
    struct Published: Sendable {
        var revision = 0
        var flags: [String: JSONValue] = [:]
        var records: [Record] = []
        var isOpen = false
    }

    /// One state the subscriber was in.
    struct Record: Sendable {
        var revision: Int
        var digest: Int
    }

    init(name: String, keys: [String]?, slow: Bool, socketPath: String, tally: Tally, seed: UInt64) {
        self.name = name
        self.keys = keys
        self.keySet = keys.map(Set.init)
        self.slow = slow
        self.socketPath = socketPath
        self.tally = tally
        self.seed = seed
    }

    var connections: Int {
        state.withLock { $0.isOpen ? 1 : 0 }
    }

    /// Connects, subscribes and starts reading; returns once the snapshot arrived (true) or the attempt failed.
    func open() -> Bool {
        let thread = Thread { [self] in
            run()
            state.withLock { $0.isOpen = false }
            finished.signal()
        }
        thread.name = "soak-subscriber"
        thread.start()
        guard ready.wait(timeout: .now() + .seconds(15)) == .success else {
            tally.fail(.subscriber, "\(name): no listen answer within 15 s")
            return false
        }
        return state.withLock { $0.isOpen }
    }

    func close() {
        closing.store(true, ordering: .releasing)
        if finished.wait(timeout: .now() + .seconds(15)) == .timedOut {
            tally.fail(.subscriber, "\(name): did not close within 15 s")
        }
    }

    func difference(from final: FinalFlags) -> String? {
        let published = state.withLock { $0 }
        let expected = keySet.map { keys in final.byKey.filter { keys.contains($0.key) } } ?? final.byKey
        let revisionMatches = keys == nil ? published.revision == final.revision : published.revision <= final.revision
        guard published.flags != expected || !revisionMatches else { return nil }
        let differing = Set(expected.keys).union(published.flags.keys).filter { expected[$0] != published.flags[$0] }
        return "\(name) at revision \(published.revision), getAll at \(final.revision): \(differing.count) flags differ"
            + (differing.min().map { " (first: \($0))" } ?? "")
    }

    func verifyStates(against history: FlagHistory, tally: Tally) -> (checked: Int, unknown: Int) {
        let records = state.withLock { $0.records }
        var unknown = 0
        for record in records {
            guard let expected = history.digest(at: record.revision, keys: keySet) else {
                unknown += 1
                continue
            }
            if expected != record.digest {
                tally.fail(.mismatch, "\(name): its flags at revision \(record.revision) differ from getAll's")
            }
        }
        return (records.count, unknown)
    }

    // MARK: The reading thread

    /// The subscription as the thread holds it.
    private struct Subscription {
        var id: String
        var revision: Int
        var flags: [String: JSONValue]
    }

    private func run() {
        var random = SeededGenerator(seed: seed)
        guard let client = tally.connection(.subscriber, prefix: "\(name): ", { try LineClient(path: socketPath) })
        else {
            ready.signal()
            return
        }
        var requestID = 1
        guard var current = subscribe(client, id: requestID) else {
            ready.signal()
            return
        }
        state.withLock { $0.isOpen = true }
        publish(current)
        ready.signal()
        // Half of them unlisten and listen again on the same connection now and then.
        let resubscribes = Bool.random(using: &random)
        var resubscribeAt =
            MonotonicClock.nanoseconds() + UInt64(Int.random(in: 2...20, using: &random)) * 1_000_000_000
        while !closing.load(ordering: .acquiring) {
            if slow {
                let pause = Int.random(in: 200...2000, using: &random)
                let until = MonotonicClock.nanoseconds() + UInt64(pause) * 1_000_000
                while MonotonicClock.nanoseconds() < until, !closing.load(ordering: .acquiring) { usleep(20_000) }
            }
            guard readAvailable(client, subscription: &current) else {
                tally.fail(.subscriber, "\(name): the daemon closed the connection")
                return
            }
            if resubscribes, MonotonicClock.nanoseconds() >= resubscribeAt, !closing.load(ordering: .acquiring) {
                requestID += 2
                guard unlisten(client, subscription: &current, id: requestID),
                    let renewed = subscribe(client, id: requestID + 1)
                else { return }
                current = renewed
                publish(current)
                tally.update { $0.resubscribed += 1 }
                resubscribeAt =
                    MonotonicClock.nanoseconds() + UInt64(Int.random(in: 2...20, using: &random)) * 1_000_000_000
            }
        }
        if Bool.random(using: &random) {
            requestID += 2
            _ = unlisten(client, subscription: &current, id: requestID)
        }
    }

    /// Reads and applies what has come: one line within 100 ms, or for a slow reader everything already there.
    /// False when the daemon closed the connection.
    private func readAvailable(_ client: LineClient, subscription: inout Subscription) -> Bool {
        while true {
            switch client.nextLine(waiting: slow ? 0 : 100) {
            case .line(let text):
                handle(text, subscription: &subscription)
                if !slow { return true }
            case .timedOut:
                return true
            case .closed:
                return false
            }
        }
    }

    /// Sends `listen` as request `id`; nil (the failure counted) when no snapshot came.
    private func subscribe(_ client: LineClient, id requestID: Int) -> Subscription? {
        var request: [String: JSONValue] = ["jsonrpc": "2.0", "id": .number(Double(requestID)), "method": "listen"]
        if let keys { request["params"] = ["keys": .array(keys.map(JSONValue.string))] }
        do {
            try client.send(Array((JSONValue.object(request).serialized() + "\n").utf8))
        } catch {
            tally.fail(.subscriber, "\(name): cannot subscribe: \(error)")
            return nil
        }
        guard case .line(let text) = client.nextLine(waiting: 10_000),
            let answer = try? JSONValue(parsing: text), answer["id"]?.integerValue == requestID,
            let result = answer["result"], let id = result["subscription"]?.stringValue,
            let revision = result["revision"]?.integerValue, let flags = result["flags"]?.arrayValue
        else {
            tally.fail(.subscriber, "\(name): no listen snapshot")
            return nil
        }
        var byKey: [String: JSONValue] = [:]
        for flag in flags {
            guard let key = flag["key"]?.stringValue else { continue }
            if let keySet, !keySet.contains(key) {
                tally.fail(.subscriber, "\(name): the snapshot holds \(key), which it did not ask for")
            }
            byKey[key] = flag
        }
        return Subscription(id: id, revision: revision, flags: byKey)
    }

    /// Sends `unlisten` as request `id` and reads up to its answer, applying the notifications that come
    /// before it; false (the failure counted) when no answer came.
    private func unlisten(_ client: LineClient, subscription: inout Subscription, id requestID: Int) -> Bool {
        let request = #"{"id":\#(requestID),"method":"unlisten","params":{"subscription":"\#(subscription.id)"}}"#
        do {
            try client.send(Array((request + "\n").utf8))
        } catch {
            tally.fail(.subscriber, "\(name): unlisten: \(error)")
            return false
        }
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while MonotonicClock.nanoseconds() < deadline {
            switch client.nextLine(waiting: 1000) {
            case .line(let text):
                guard let answer = try? JSONValue(parsing: text), answer["id"]?.integerValue == requestID else {
                    handle(text, subscription: &subscription)
                    continue
                }
                guard answer["result"] != nil else {
                    tally.fail(.subscriber, "\(name): unlisten: \(text)")
                    return false
                }
                tally.update { $0.unlistened += 1 }
                return true
            case .timedOut:
                continue
            case .closed:
                tally.fail(.subscriber, "\(name): the daemon closed the connection before answering unlisten")
                return false
            }
        }
        tally.fail(.subscriber, "\(name): no answer to unlisten")
        return false
    }

    /// Applies one `flagsChanged`, checking its subscription, its revision and its keys.
    private func handle(_ text: String, subscription: inout Subscription) {
        guard let message = try? JSONValue(parsing: text), message["method"]?.stringValue == "flagsChanged",
            let params = message["params"], let revision = params["revision"]?.integerValue,
            let changed = params["changed"]?.arrayValue, let removed = params["removed"]?.arrayValue
        else {
            tally.fail(.subscriber, "\(name): unexpected line: \(text.prefix(200))")
            return
        }
        if params["subscription"]?.stringValue != subscription.id {
            tally.fail(.subscriber, "\(name): a notification for another subscription: \(text.prefix(200))")
        }
        if keys == nil, revision != subscription.revision + 1 {
            tally.fail(
                .lostNotification, "\(name): revision \(revision) came after \(subscription.revision)")
        } else if revision <= subscription.revision {
            tally.fail(.subscriber, "\(name): revision \(revision) came after \(subscription.revision)")
        }
        if changed.isEmpty, removed.isEmpty {
            tally.fail(.subscriber, "\(name): an empty notification at revision \(revision)")
        }
        for flag in changed {
            guard let key = flag["key"]?.stringValue else {
                tally.fail(.subscriber, "\(name): a changed flag without a key")
                continue
            }
            if let keySet, !keySet.contains(key) { tally.fail(.subscriber, "\(name): told about \(key)") }
            subscription.flags[key] = flag
        }
        for key in removed.compactMap(\.stringValue) {
            if let keySet, !keySet.contains(key) { tally.fail(.subscriber, "\(name): told \(key) was removed") }
            subscription.flags[key] = nil
        }
        subscription.revision = revision
        publish(subscription)
        tally.update { $0.notifications += 1 }
    }

    private func publish(_ subscription: Subscription) {
        let record = Record(revision: subscription.revision, digest: FlagHistory.digest(subscription.flags))
        state.withLock { published in
            published.revision = subscription.revision
            published.flags = subscription.flags
            published.records.append(record)
        }
    }
}

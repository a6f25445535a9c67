import FlagsCore
import FlagsProtocol
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// The subscription table on its own, with connections that never touch a socket: what each call writes and
/// what it counts.
@Suite(.hangLimit) struct SubscriptionTableTests {
    static let peer = PeerCredentials(pid: 1, uid: 1000, gid: 1000)
    static let flags = FlagSet([
        Flag(key: "a", isEnabled: true, ruleId: "r1"), Flag(key: "b", isEnabled: false, ruleId: "r2"),
    ])

    static func connection() -> LineConnection { LineConnection(id: 1, fd: -1, peer: peer, maxLineBytes: 1024) }

    static func text(_ connection: LineConnection) -> String {
        defer { connection.output.bytes.removeAll() }
        return String(decoding: connection.output.bytes, as: UTF8.self)
    }

    @Test func listenPastMaxSubscriptionsIsRefusedAndNotCounted() {
        let table = SubscriptionTable()
        let connection = Self.connection()
        let snapshot = FlagSnapshot(epoch: "e1", revision: 1, flags: Self.flags)
        let limits = ServerLimits(maxSubscriptions: 1)
        table.listen(
            connection, keys: nil, requestID: RequestID(.number(1)), limits: limits, snapshot: snapshot,
            expiresAt: { .null })
        #expect(Self.text(connection).contains(#""subscription":"s1""#))
        table.listen(
            connection, keys: ["a"], requestID: RequestID(.number(2)), limits: limits, snapshot: snapshot,
            expiresAt: { .null })
        #expect(Self.text(connection).contains("-32002"))
        #expect(table.count == 1)
        table.remove(connection)
        #expect(table.count == 0)
    }

    @Test func unlistenEndsOnlyAnExistingSubscriptionAndGivesItsKeysBack() {
        let table = SubscriptionTable()
        let connection = Self.connection()
        let snapshot = FlagSnapshot(epoch: "e1", revision: 1, flags: Self.flags)
        table.listen(
            connection, keys: ["a", "b"], requestID: nil, limits: ServerLimits(), snapshot: snapshot,
            expiresAt: { .null })
        #expect(connection.output.bytes.isEmpty)
        #expect(connection.listenKeyUnits > 0)
        table.unlisten(connection, subscription: "s9", requestID: RequestID(.number(3)))
        #expect(Self.text(connection).contains("is not a subscription of this connection"))
        table.unlisten(connection, subscription: "s1", requestID: RequestID(.number(4)))
        #expect(Self.text(connection) == #"{"jsonrpc":"2.0","id":4,"result":{}}"# + "\n")
        #expect(connection.listenKeyUnits == 0)
        #expect(table.count == 0)
    }

    @Test func fanOutTellsOnlyTheSubscriptionsWhoseKeysChanged() {
        let table = SubscriptionTable()
        let onA = Self.connection()
        let onB = Self.connection()
        let snapshot = FlagSnapshot(epoch: "e1", revision: 1, flags: Self.flags)
        for (connection, key) in [(onA, "a"), (onB, "b")] {
            table.listen(
                connection, keys: [key], requestID: nil, limits: ServerLimits(), snapshot: snapshot,
                expiresAt: { .null })
        }
        let newer = FlagSet([
            Flag(key: "a", isEnabled: false, ruleId: "r3"), Flag(key: "b", isEnabled: false, ruleId: "r2"),
        ])
        let update = FlagUpdate(
            snapshot: FlagSnapshot(epoch: "e1", revision: 2, flags: newer), diff: Self.flags.diff(to: newer))
        var settled: [ObjectIdentifier] = []
        table.fanOut(update, to: [onA, onB]) { settled.append(ObjectIdentifier($0)) }
        #expect(Self.text(onA).contains("flagsChanged"))
        #expect(onB.output.bytes.isEmpty)
        #expect(settled.count == 2)
    }

    @Test func countsTheSubscriptionsThatHearOfAKey() {
        let table = SubscriptionTable()
        let first = Self.connection()
        let second = Self.connection()
        let snapshot = FlagSnapshot(epoch: "e", revision: 1, flags: Self.flags)
        table.listen(
            first, keys: ["a"], requestID: nil, limits: ServerLimits(Configuration()), snapshot: snapshot,
            expiresAt: { .null })
        table.listen(
            second, keys: nil, requestID: nil, limits: ServerLimits(Configuration()), snapshot: snapshot,
            expiresAt: { .null })
        #expect(table.count(forKey: "a") == 2)
        #expect(table.count(forKey: "b") == 1)
        table.unlisten(first, subscription: "s1", requestID: nil)
        #expect(table.count(forKey: "a") == 1)
        table.remove(second)
        #expect(table.count(forKey: "a") == 0)
        #expect(table.count(forKey: "b") == 0)
    }
}

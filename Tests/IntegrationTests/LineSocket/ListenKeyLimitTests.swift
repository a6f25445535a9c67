import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `listen` keys are bounded per connection (`MaxListenKeys`), so that the connections' subscriptions cannot grow
/// the daemon without limit.
@Suite(.hangLimit) struct ListenKeyLimitTests {
    private static func keys(_ count: Int, prefix: String = "k") -> JSONValue {
        .array((0..<count).map { .string("\(prefix)\($0)") })
    }

    @Test func keysPastMaxListenKeysAreRefusedWithTooManyListenKeys() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all, extra: "[Daemon]\nMaxListenKeys=10\n")
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let first = try #require(try client.call("listen", ["keys": Self.keys(6)])?["result"]?["subscription"])
        let refused = try #require(try client.call("listen", ["keys": Self.keys(5, prefix: "x")])?["error"])
        #expect(refused["code"] == -32003, "\(refused)")
        #expect(refused["data"]?["limit"] == 10, "\(refused)")
        #expect(refused["message"]?.stringValue?.contains("MaxListenKeys") == true, "\(refused)")
        // Subscribing to every key holds no key at all; within the limit is fine; a key of 200 bytes counts 4.
        #expect(try client.call("listen")?["result"]?["subscription"] != nil)
        #expect(try client.call("listen", ["keys": Self.keys(4, prefix: "y")])?["result"]?["subscription"] != nil)
        #expect(try client.call("unlisten", ["subscription": first])?["result"] == .object([:]))
        let long = JSONValue.array([.string(String(repeating: "l", count: 200)), "a", "b"])
        #expect(try client.call("listen", ["keys": long])?["result"]?["subscription"] != nil)
        #expect(try client.call("listen", ["keys": ["c"]])?["error"]?["code"] == -32003)
        // Another connection has a budget of its own.
        #expect(try daemon.connect().call("listen", ["keys": Self.keys(10)])?["result"] != nil)
    }

    /// The worst case: every connection holds the most its limits allow (64 subscriptions of 16 keys of 64
    /// bytes, the costliest shape per unit: 1,024 units) after asking in vain for 4,000 keys.
    @Test func connectionsAtEveryLimitGrowTheDaemonByLittle() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let pid = daemon.process.processIdentifier
        let checker = try daemon.connect()
        #expect(try checker.call("status")?["result"]?["connections"] == 1)
        let before = try #require(ProcessStatus(pid: pid))
        let connections = 32
        var clients: [RawClient] = []
        var accepted = 0
        var refused = 0
        for connection in 0..<connections {
            let client = try daemon.connect()
            clients.append(client)
            let many = try client.call("listen", ["keys": Self.keys(4000, prefix: "c\(connection)_")])
            #expect(many?["error"]?["code"] == -32003)
            for subscription in 0..<65 {
                let keys = JSONValue.array(
                    (0..<16).map { index in
                        let name = "c\(connection)s\(subscription)k\(index)_"
                        return .string(name + String(repeating: "x", count: 64 - name.utf8.count))
                    })
                let answer = try #require(try client.call("listen", ["keys": keys]), "\(daemon.log)")
                if answer["result"] != nil { accepted += 1 } else { refused += 1 }
            }
        }
        let after = try #require(ProcessStatus(pid: pid))
        let growth = after.anonymousKiB - before.anonymousKiB
        print(
            "listen keys: \(connections) connections, \(accepted) subscriptions at 1,024 units each connection;"
                + " RssAnon grew by \(growth) KiB (\(growth / connections) KiB a connection); \(before) -> \(after)")
        // 64 subscriptions fit (the limit is MaxSubscriptions); the 65th is refused.
        #expect(accepted == connections * 64 && refused == connections)
        // Measured at about 212 KiB a connection (the figure in docs/reliability.md); judged at half as much again.
        #expect(Sanitizer.isActive || growth < connections * 336, "RssAnon grew by \(growth) KiB")
        #expect(try checker.call("status")?["result"]?["subscriptions"] == .number(Double(accepted)))
    }
}

import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A service manager that stops reading its notification socket: sd_notify messages then cannot be delivered,
/// and the daemon must go on serving, reloading and stopping regardless.
@Suite(.hangLimit) struct StalledManagerTests {
    @Test("A manager that stops reading NOTIFY_SOCKET stalls neither requests, reloads nor the shutdown")
    func managerThatStopsReading() throws {
        let daemon = try SystemdNotifyTests.localDaemon()
        defer { daemon.cleanUp() }
        daemon.notify.stopReading()
        let client = try RawClient(socketPath: daemon.socketPath)
        // Each reload sends RELOADING=1 and READY=1: the socket's queue (10 datagrams) is full after five.
        for id in 1...12 {
            let reply = try client.request(#"{"id":\#(id),"method":"reload"}"#, timeout: .seconds(5))
            try #require(reply?["result"] != nil, "reload \(id): \(String(describing: reply))")
        }
        let status = try client.request(#"{"id":99,"method":"status"}"#, timeout: .seconds(5))
        #expect(status?["result"]?["flags"] == 1)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: .seconds(5)) == 0)
    }

    @Test("What waited while the manager did not read arrives in order once it reads again")
    func queuedMessagesArriveInOrder() async throws {
        let daemon = try SystemdNotifyTests.localDaemon()
        defer { daemon.cleanUp() }
        let before = daemon.notify.received.count
        daemon.notify.stopReading()
        let client = try RawClient(socketPath: daemon.socketPath)
        for id in 1...8 {
            let reply = try client.request(#"{"id":\#(id),"method":"reload"}"#, timeout: .seconds(5))
            try #require(reply?["result"] != nil)
        }
        daemon.notify.resumeReading()
        // Eight reloads, each RELOADING=1 then READY=1: the last READY=1 is the sixteenth message.
        let received = await Eventually.wait(timeout: .seconds(10)) {
            daemon.notify.received.dropFirst(before).filter { $0.contains("READY=1") }.count >= 8
        }
        #expect(received)
        let states = daemon.notify.received.dropFirst(before).compactMap { message -> String? in
            if message.contains("RELOADING=1") { return "reloading" }
            if message.contains("READY=1") { return "ready" }
            return nil
        }
        #expect(states == Array(repeating: ["reloading", "ready"], count: 8).flatMap { $0 })
    }
}

import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// At `MaxConnections`, a connection its peer closed no longer counts: hangups are handled before new
/// connections are counted.
@Suite(.hangLimit) struct ConnectionSlotTests {
    @Test func aClientConnectingRightAfterAnotherLeftIsServedAtTheLimit() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all, extra: "[Daemon]\nMaxConnections=2\n")
        defer { daemon.cleanUp() }
        let holder = try daemon.connect()
        #expect(try holder.call("status")?["result"]?["connections"] == 1)
        var refused = 0
        for round in 0..<300 {
            do {
                // The second slot: taken, used or not, then closed, and at once taken by the next client.
                let leaving = try daemon.connect()
                if round % 2 == 0 {
                    #expect((try? leaving.call("get", ["key": "dark_mode"], id: .number(Double(round)))) != nil)
                }
            }
            let arriving = try daemon.connect()
            // A refused client finds its connection closed: no answer, or a broken pipe.
            let answer = try? arriving.call("get", ["key": "dark_mode"], id: .number(Double(round)))
            if answer?["result"] == nil {
                refused += 1
            }
        }
        #expect(refused == 0, "\(refused) of 300 clients refused; log:\n\(daemon.log)")
        #expect(try holder.call("status")?["result"]?["connections"] != nil)
    }
}

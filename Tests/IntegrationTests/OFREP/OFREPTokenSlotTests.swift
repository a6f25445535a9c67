import FlagsCore
import Foundation
import TestSupport
import Testing

/// Clients without the token cannot hold the TCP listener's connection slots against those with it.
@Suite(.hangLimit) struct OFREPTokenSlotTests {
    @Test func aRequestWithoutTheTokenIs401AndEndsItsConnection() throws {
        let rig = try OFREPRig(tcp: true)
        defer { rig.cleanUp() }
        let client = try rig.client()
        #expect(client.post(OFREPRig.bulk, headers: ["Authorization: Bearer wrong"])?.status == 401)
        #expect(client.isClosedByPeer())
        try rig.expectStillServing()
    }

    @Test func connectionsWithoutTheTokenGiveWayToAClientWithIt() throws {
        let rig = try OFREPRig(tcp: true, extra: "ConnectionLimit=4\nIdleTimeout=5s\n")
        defer { rig.cleanUp() }
        // Every slot held: two idle connections, two that keep sending requests without the token.
        var holders: [HTTPClient] = []
        for index in 0..<4 {
            let holder = try rig.client()
            if index >= 2 { #expect(holder.post(OFREPRig.single("banner"))?.status == 401) }
            holders.append(holder)
        }
        for round in 0..<3 {
            let client = try rig.client()
            let answer = client.post(OFREPRig.single("banner"), headers: rig.authorization)
            #expect(answer?.status == 200, "round \(round): \(String(describing: answer?.status))")
            // A client with the token keeps its slot while new clients without it arrive.
            for _ in 0..<4 { holders.append(try rig.client()) }
            #expect(client.post(OFREPRig.single("banner"), headers: rig.authorization)?.status == 200)
        }
        _ = holders
    }
}

import FlagsCore
import Foundation
import TestSupport
import Testing
import UnixIO

/// Hostile and broken OFREP clients: each gets a clear 4xx/5xx answer or a closed connection, the daemon never
/// crashes, and everyone else is still served flags.
@Suite(.hangLimit) struct OFREPHostileClientTests {
    @Test func anOversizedHeadIs431AndClosed() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let client = try rig.client()
        client.send("POST \(OFREPRig.bulk) HTTP/1.1\r\nX-Padding: " + String(repeating: "a", count: 20000) + "\r\n\r\n")
        #expect(client.readResponse()?.status == 431)
        #expect(client.isClosedByPeer())
        try rig.expectStillServing()
    }

    @Test func anOversizedBodyIs413BeforeItIsSent() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let client = try rig.client()
        client.send("POST \(OFREPRig.bulk) HTTP/1.1\r\nContent-Length: 100000000\r\n\r\n{")
        #expect(client.readResponse()?.status == 413)
        #expect(client.isClosedByPeer())
        try rig.expectStillServing()
    }

    @Test func aChunkedBodyIs501() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let client = try rig.client()
        client.send("POST \(OFREPRig.bulk) HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
        let answer = client.readResponse()
        #expect(answer?.status == 501)
        #expect(answer?.json?["errorDetails"]?.stringValue?.contains("Content-Length") == true)
        #expect(client.isClosedByPeer())
        try rig.expectStillServing()
    }

    @Test(arguments: [
        "\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\u{00}\u{01}\u{fc}\u{03}\u{03}\r\n\r\n", "GET\r\n\r\n",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getAll\"}\n\r\n\r\n", "POST / HTTP/1.1\r\n: empty\r\n\r\n",
    ])
    func garbageIs400AndClosed(text: String) throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let client = try rig.client()
        client.send(text)
        #expect(client.readResponse()?.status == 400)
        #expect(client.isClosedByPeer())
        try rig.expectStillServing()
    }

    @Test func pipelinedRequestsAreAnsweredInOrderUntilTheJunk() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let client = try rig.client()
        client.send(
            HTTPClient.post(OFREPRig.single("banner")) + HTTPClient.post(OFREPRig.single("nope"))
                + "JUNK JUNK JUNK\r\n\r\n" + HTTPClient.post(OFREPRig.bulk))
        let first = client.readResponse()
        #expect(first?.status == 200)
        #expect(first?.json?["key"] == "banner")
        #expect(client.readResponse()?.status == 404)
        #expect(client.readResponse()?.status == 400)
        #expect(client.isClosedByPeer())
        try rig.expectStillServing()
    }

    @Test func aSlowlorisIsCutOffAtTheIdleTimeoutWhileOthersAreServed() throws {
        let rig = try OFREPRig(extra: "IdleTimeout=1s\n")
        defer { rig.cleanUp() }
        let slow = try rig.client()
        let clock = ContinuousClock()
        let started = clock.now
        // One byte of the head at a time: each keeps the connection busy but never finishes the request.
        var closed = false
        for byte in "POST \(OFREPRig.bulk) HTTP/1.1\r\nX-Slow: ".utf8 {
            guard slow.send([byte]) else {
                closed = true
                break
            }
            try rig.expectStillServing()
            if slow.isClosedByPeer(timeout: .milliseconds(100)) {
                closed = true
                break
            }
        }
        if !closed { closed = slow.isClosedByPeer(timeout: .seconds(5)) }
        #expect(closed)
        #expect(clock.now - started < .seconds(5))
        try rig.expectStillServing()
    }

    @Test func aMidRequestTimeoutIsAnswered408() throws {
        let rig = try OFREPRig(extra: "IdleTimeout=1s\n")
        defer { rig.cleanUp() }
        let client = try rig.client()
        client.send("POST \(OFREPRig.bulk) HTTP/1.1\r\nContent-Length: 10\r\n\r\n{")
        #expect(client.readResponse(timeout: .seconds(5))?.status == 408)
        #expect(client.isClosedByPeer())
    }

    @Test func anIdleKeepAliveConnectionIsClosedQuietly() throws {
        let rig = try OFREPRig(extra: "IdleTimeout=1s\n")
        defer { rig.cleanUp() }
        let client = try rig.client()
        #expect(client.post(OFREPRig.bulk)?.status == 200)
        #expect(client.readResponse(timeout: .seconds(5)) == nil)
        #expect(client.isClosedByPeer(timeout: .seconds(1)))
    }

    @Test func connectionsOverTheLimitGet503AndTheRestAreServed() async throws {
        let rig = try OFREPRig(extra: "ConnectionLimit=3\n")
        defer { rig.cleanUp() }
        var held = try (0..<3).map { _ in try rig.client() }
        for client in held { #expect(client.post(OFREPRig.single("banner"))?.status == 200) }
        let extra = try rig.client()
        let refused = extra.readResponse()
        #expect(refused?.status == 503)
        #expect(refused?.headers["retry-after"] == "1")
        #expect(extra.isClosedByPeer())
        // The held connections still work; once one leaves, a newcomer is served.
        #expect(held[0].post(OFREPRig.bulk)?.status == 200)
        held.removeLast()
        let served = try await Eventually.wait { try rig.post(OFREPRig.single("banner"))?.status == 200 }
        #expect(served)
    }

    @Test func aClientThatNeverReadsDoesNotGrowTheDaemonWithoutBound() throws {
        let rig = try OFREPRig(Self.manyFlags())
        defer { rig.cleanUp() }
        let greedy = try rig.client()
        // Thousands of pipelined bulk requests and not one answer read: the daemon stops reading them.
        let request = HTTPClient.post(OFREPRig.bulk)
        let batch = String(repeating: request, count: 200)
        // Non-blocking: once the daemon stops reading and the socket buffers fill, a send fails instead of waiting.
        try UnixSocket.setNonBlocking(greedy.fd)
        var batches = 0
        while batches < 200, greedy.send(batch) { batches += 1 }
        #expect(batches < 200, "the daemon read everything a client that never reads sent")
        try rig.expectStillServing()
        #expect(rig.daemon.isRunning)
    }

    /// Enough flags that a bulk answer is large (about 100 KB).
    static func manyFlags() -> [Flag] {
        var flags = [OFREPRig.checkout]
        for index in 0..<500 {
            let properties: [String: JSONValue] = ["p": .string("value \(index)")]
            flags.append(
                Flag(key: "flag_\(index)", isEnabled: index % 2 == 0, ruleId: "r_\(index)", properties: properties))
        }
        return flags
    }
}

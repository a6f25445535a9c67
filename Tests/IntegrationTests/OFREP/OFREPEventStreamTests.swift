import FlagsCore
import Foundation
import TestSupport
import Testing

extension OFREPRig {
    /// A new connection for an event stream.
    func streamClient() throws -> EventStreamClient {
        if let socketPath { return try EventStreamClient(unixSocket: socketPath) }
        return try EventStreamClient(port: try #require(port))
    }

    /// The bulk answer, its `ETag` and the request target of the stream it advertises.
    func bulkWithStream(headers: [String] = []) throws -> (answer: HTTPClient.Response, tag: String, target: String) {
        let answer = try #require(try post(Self.bulk, headers: headers))
        #expect(answer.status == 200)
        let tag = try #require(answer.headers["etag"])
        let streams = try #require(answer.json?["eventStreams"])
        let target = try #require(OFREPEventStreamTests.checkedTarget(streams, port: port))
        return (answer, tag, target)
    }
}

/// OFREP event streams (ADR-0008): the bulk answer advertises a stream whose URL carries its own credential; the
/// stream announces every change of the bulk answer with its new `ETag`, resumes by `Last-Event-ID`, and is
/// bounded like every other connection.
@Suite(.hangLimit) struct OFREPEventStreamTests {
    /// `eventStreams` as the protocol's `eventStream` schema requires (`type` a string, exactly one of `url` and
    /// `endpoint.requestUri`), one `sse` entry; the stream's request target.
    static func checkedTarget(_ streams: JSONValue, port: UInt16?) -> String? {
        guard case .array(let entries) = streams, entries.count == 1, case .object(let entry) = entries[0],
            entry["type"] == "sse"
        else { return nil }
        switch (entry["url"], entry["endpoint"]) {
        case (.string(let url)?, nil):
            guard let port, url.hasPrefix("http://127.0.0.1:\(port)/") else { return nil }
            return String(url.dropFirst("http://127.0.0.1:\(port)".count))
        case (nil, .object(let endpoint)?):
            guard case .string(let uri)? = endpoint["requestUri"], uri.hasPrefix("/") else { return nil }
            return uri
        default:
            return nil
        }
    }

    /// An event as the protocol's `sseEvent` and `sseEventData` schemas and ADR-0008 require.
    static func expectRefetch(
        _ block: EventStreamClient.Block?, etag: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(block?.event == "message", sourceLocation: sourceLocation)
        #expect(block?.id?.isEmpty == false, sourceLocation: sourceLocation)
        #expect(block?.json?["type"] == "refetchEvaluation", sourceLocation: sourceLocation)
        #expect(block?.json?["etag"] == .string(etag), sourceLocation: sourceLocation)
        if case .number(let seconds)? = block?.json?["lastModified"] {
            #expect(abs(seconds - Date().timeIntervalSince1970) < 60, sourceLocation: sourceLocation)
        } else {
            Issue.record("no lastModified in \(String(describing: block))", sourceLocation: sourceLocation)
        }
    }

    static let changed = [
        Flag(key: "new_checkout", isEnabled: true, ruleId: "r_1a2b3c4d", properties: ["button_color": "red"]),
        OFREPRig.banner,
    ]

    @Test(arguments: [false, true])
    func everyChangeOfTheBulkAnswerIsAnnouncedWithItsNewETag(tcp: Bool) throws {
        let rig = try OFREPRig(tcp: tcp)
        defer { rig.cleanUp() }
        let first = try rig.bulkWithStream(headers: rig.authorization)
        // The stream needs no token: the channel in its URL stands for it.
        let stream = try rig.streamClient()
        #expect(stream.open(first.target) == 200)
        #expect(stream.headers["content-type"] == "text/event-stream")
        #expect(stream.headers["content-length"] == nil)
        #expect(stream.next()?.retry == 1000)
        // Nothing changed: a 304.
        #expect(try rig.post(OFREPRig.bulk, headers: ["If-None-Match: \(first.tag)"])?.status == 304)
        // A file edit.
        try rig.daemon.writeFlags(Self.changed)
        let edit = stream.nextEvent()
        let second = try rig.bulkWithStream()
        #expect(second.tag != first.tag)
        Self.expectRefetch(edit, etag: second.tag)
        // The re-fetch ADR-0008 describes: flagConfigEtag in the query, the new answer for the old If-None-Match.
        let refetch = try #require(
            try rig.post(
                OFREPRig.bulk + "?flagConfigEtag="
                    + (second.tag.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
                headers: ["If-None-Match: \(first.tag)"]))
        #expect(refetch.status == 200)
        #expect(refetch.headers["etag"] == second.tag)
        #expect(refetch.json?["flags"] != nil)
        // An override over the line protocol.
        let session = try SocketSession(socketPath: rig.daemon.socketPath)
        _ = try session.result("setOverride", ["key": "banner", "enabled": true])
        let override = stream.nextEvent()
        let third = try rig.bulkWithStream()
        Self.expectRefetch(override, etag: third.tag)
        #expect(override?.id != edit?.id)
        // An edit that changes nothing the bulk answer holds sends nothing; the next real change does.
        try rig.daemon.writeFlags(Self.changed)
        _ = try session.result("clearOverride", ["key": "banner"])
        let cleared = stream.nextEvent()
        Self.expectRefetch(cleared, etag: try rig.bulkWithStream().tag)
        // The full URL never reaches the log.
        let channel = String(first.target.split(separator: "=").last ?? "")
        #expect(channel.count == 32)
        #expect(!rig.daemon.log.contains(channel))
    }

    @Test func aResumingClientGetsTheLatestChangeAtOnceAndAFreshOneNothing() throws {
        let rig = try OFREPRig(tcp: true)
        defer { rig.cleanUp() }
        let first = try rig.bulkWithStream(headers: rig.authorization)
        let stream = try rig.streamClient()
        #expect(stream.open(first.target) == 200)
        try rig.daemon.writeFlags(Self.changed)
        let seen = try #require(stream.nextEvent())
        let seenID = try #require(seen.id)
        // While the client is away, another change: the first stream hears of it, so the daemon has it.
        try rig.daemon.writeFlags([OFREPRig.banner])
        #expect(stream.nextEvent() != nil)
        let current = try rig.bulkWithStream(headers: rig.authorization).tag
        let resumed = try rig.streamClient()
        #expect(resumed.open(first.target, headers: ["Last-Event-ID: \(seenID)"]) == 200)
        let replay = resumed.nextEvent(timeout: .seconds(5))
        Self.expectRefetch(replay, etag: current)
        // Resuming from the latest id: nothing to replay.
        let upToDate = try rig.streamClient()
        #expect(upToDate.open(first.target, headers: ["Last-Event-ID: \(replay?.id ?? "")"]) == 200)
        #expect(upToDate.next()?.retry == 1000)
        #expect(upToDate.nextEvent(timeout: .milliseconds(300)) == nil)
        // An id from before a restart (or made up) gets the latest change too.
        let stranger = try rig.streamClient()
        #expect(stranger.open(first.target, headers: ["Last-Event-ID: 0000-7"]) == 200)
        Self.expectRefetch(stranger.nextEvent(timeout: .seconds(5)), etag: current)
    }

    @Test func heartbeatsKeepAQuietStreamAliveAndItsClientSendsNothingMore() throws {
        let rig = try OFREPRig(tcp: true, extra: "IdleTimeout=1s\n")
        defer { rig.cleanUp() }
        let first = try rig.bulkWithStream(headers: rig.authorization)
        let stream = try rig.streamClient()
        #expect(stream.open(first.target) == 200)
        #expect(stream.next()?.retry == 1000)
        // Past the idle timeout twice over, the stream is open and has sent heartbeat comments.
        for _ in 0..<4 {
            let beat = stream.next(timeout: .seconds(3))
            #expect(beat?.comments == ["heartbeat"])
        }
        try rig.daemon.writeFlags(Self.changed)
        Self.expectRefetch(stream.nextEvent(), etag: try rig.bulkWithStream(headers: rig.authorization).tag)
        // Bytes from the client end its stream.
        stream.send("GET / HTTP/1.1\r\n\r\n")
        #expect(stream.isClosedByPeer())
        try rig.expectStillServing()
    }
}

/// Hostile clients of the event stream: no channel, a wrong one, too many streams, a reader that never reads.
@Suite(.hangLimit) struct OFREPEventStreamHostileTests {
    @Test(arguments: [
        "/ofrep/v1/events", "/ofrep/v1/events?channel=", "/ofrep/v1/events?channel=0123456789abcdef0123456789abcdef",
        "/ofrep/v1/events?other=1",
    ])
    func aStreamWithoutAValidChannelIs404AndEndsItsConnection(target: String) throws {
        let rig = try OFREPRig(tcp: true, extra: "AllowedOrigins=http://127.0.0.1:8080\n")
        defer { rig.cleanUp() }
        let stream = try rig.streamClient()
        #expect(stream.open(target, headers: ["Origin: http://evil.example"]) == 404)
        #expect(stream.headers["access-control-allow-origin"] == nil)
        #expect(stream.remainingBody().contains("no such event stream"))
        // A real channel with the wrong method.
        let valid = try rig.bulkWithStream(headers: rig.authorization)
        let posted = try #require(try rig.client().post(valid.target))
        #expect(posted.status == 405)
        try rig.expectStillServing()
    }

    @Test func streamsPastTheirBoundAre503AndRequestsStillServe() async throws {
        // ConnectionLimit=8: at most 4 streams, so requests keep their room.
        let rig = try OFREPRig(tcp: true, extra: "ConnectionLimit=8\n")
        defer { rig.cleanUp() }
        let target = try rig.bulkWithStream(headers: rig.authorization).target
        var open: [EventStreamClient] = []
        for _ in 0..<4 {
            let stream = try rig.streamClient()
            #expect(stream.open(target) == 200)
            open.append(stream)
        }
        for _ in 0..<3 {
            let refused = try rig.streamClient()
            #expect(refused.open(target) == 503)
            #expect(refused.headers["retry-after"] == "5")
            #expect(refused.isClosedByPeer())
        }
        try rig.expectStillServing()
        // Every open stream still hears of a change; one closed gives its place back.
        try rig.daemon.writeFlags(OFREPEventStreamTests.changed)
        for stream in open { #expect(stream.nextEvent()?.json?["type"] == "refetchEvaluation") }
        open.removeLast()
        #expect(
            try await Eventually.wait {
                let again = try rig.streamClient()
                return again.open(target) == 200
            })
    }

    @Test func aReaderThatNeverReadsIsCutOffAndTheOthersHearEveryChange() throws {
        let rig = try OFREPRig(tcp: true)
        defer { rig.cleanUp() }
        let target = try rig.bulkWithStream(headers: rig.authorization).target
        // A small receive buffer, so that the daemon's queue for it grows quickly.
        let stalled = try EventStreamClient(port: try #require(rig.port), receiveBuffer: 2048)
        #expect(stalled.open(target) == 200)
        let reader = try rig.streamClient()
        #expect(reader.open(target) == 200)
        let session = try SocketSession(socketPath: rig.daemon.socketPath)
        var heard = 0
        // Each override changes the bulk answer: one event of about 120 bytes for each stream. The stalled
        // reader's window and the daemon's socket buffer hold some; past those, 8 KiB queued cut it off.
        let rounds = 600
        for round in 0..<rounds {
            _ = try session.result("setOverride", ["key": "banner", "enabled": .bool(round % 2 == 0)])
            if reader.nextEvent(timeout: .seconds(5)) != nil { heard += 1 }
        }
        #expect(heard == rounds)
        #expect(stalled.isClosedByPeer(timeout: .seconds(5)))
        try rig.expectStillServing()
    }
}

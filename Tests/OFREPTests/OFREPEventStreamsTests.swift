import FlagsCore
import OFREP
import TestSupport
import Testing
import UnixIO

/// Event stream channels (issued, replaced, expired on an injected clock) and the events.
@Suite(.hangLimit) struct OFREPEventStreamsTests {
    static let hour: UInt64 = 3600 * 1_000_000_000

    private func streams() -> OFREPEventStreams {
        let counter = Locked(0)
        return OFREPEventStreams(
            lifetime: Self.hour, etag: "\"a\"", wallSeconds: 1_764_605_012,
            newID: {
                counter.withLock { value in
                    value += 1
                    return "id\(value)-" + String(repeating: "x", count: 24)
                }
            })
    }

    @Test func aChannelIsAdvertisedForItsLifetimeAndAcceptedForTwice() {
        var streams = streams()
        let first = streams.advertisedChannel(now: 0)
        #expect(streams.advertisedChannel(now: Self.hour - 1) == first)
        #expect(streams.nextRotation == Self.hour)
        let second = streams.advertisedChannel(now: Self.hour)
        #expect(second != first)
        #expect(streams.accepts(first, now: Self.hour))
        #expect(streams.accepts(second, now: Self.hour))
        #expect(!streams.accepts(first, now: 2 * Self.hour))
        #expect(streams.accepts(second, now: 2 * Self.hour))
        #expect(!streams.accepts("", now: Self.hour))
        #expect(!streams.accepts(first + "0", now: Self.hour))
        _ = streams.advertisedChannel(now: 5 * Self.hour)
        #expect(!streams.accepts(second, now: 5 * Self.hour))
    }

    @Test func randomIDsAre128BitsOfHex() {
        let ids = Set((0..<100).map { _ in OFREPEventStreams.randomID() })
        #expect(ids.count == 100)
        #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
    }

    @Test func anEventIsRecordedOnlyForANewTagAndResumingReplaysTheLatest() throws {
        var streams = streams()
        #expect(streams.record(etag: "\"a\"", wallSeconds: 1) == nil)
        let recorded = streams.record(etag: "\"b\"", wallSeconds: 1_764_605_099)
        let bytes = try #require(recorded)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(
            text
                == "id: id1-xxxx-1\nevent: message\ndata: {\"etag\":\"\\\"b\\\"\",\"lastModified\":1764605099,\"type\":\"refetchEvaluation\"}\n\n"
        )
        #expect(streams.opening(lastEventID: nil) == Array("retry: 1000\n\n".utf8))
        #expect(streams.opening(lastEventID: "id1-xxxx-1") == Array("retry: 1000\n\n".utf8))
        #expect(streams.opening(lastEventID: "id1-xxxx-0") == Array("retry: 1000\n\n".utf8) + bytes)
        #expect(streams.opening(lastEventID: "other-9") == Array("retry: 1000\n\n".utf8) + bytes)
    }

    @Test func theBulkAnswerAdvertisesTheStreamFirstAndItsTagFollowsTheBody() throws {
        let flags = OFREPFlags(FlagSet([Flag(key: "a", isEnabled: true, ruleId: "r")]))
        let tcp = flags.advertising(OFREPEventStreams.advert(channel: "c1", origin: "http://127.0.0.1:8016"))
        let body = try #require(tcp.bulkBody)
        let json = try JSONValue(parsing: body)
        #expect(
            json["eventStreams"]
                == [["type": "sse", "url": "http://127.0.0.1:8016/ofrep/v1/events?channel=c1"]])
        let plain = try JSONValue(parsing: try #require(flags.bulkBody))
        #expect(json["flags"] == plain["flags"])
        #expect(tcp.bulkETag == EntityTag(digestOf: body))
        let unix = flags.advertising(OFREPEventStreams.advert(channel: "c1", origin: nil))
        #expect(
            (try JSONValue(parsing: try #require(unix.bulkBody)))["eventStreams"]
                == [["type": "sse", "endpoint": ["requestUri": "/ofrep/v1/events?channel=c1"]]])
        #expect(OFREPEventStreams.channel(inQuery: "a=1&channel=c1") == "c1")
        #expect(OFREPEventStreams.channel(inQuery: nil) == nil)
    }
}

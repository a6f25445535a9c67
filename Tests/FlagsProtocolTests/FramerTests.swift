import FlagsCore
import FlagsProtocol
import TestSupport
import Testing

/// Framing: the line protocol's `\n`-terminated lines (`\r\n` tolerated, blank lines skipped) and Varlink's
/// NUL-terminated messages, each with a length limit.
@Suite(.hangLimit) struct FramerTests {
    private func lines(_ framer: inout Framer) -> [String] {
        var found: [String] = []
        while case .message(let line) = framer.next() { found.append(String(decoding: line, as: UTF8.self)) }
        return found
    }

    @Test func aLineSplitAcrossAppendsIsReturnedWhole() {
        var framer = Framer(.newline, maximumBytes: 100)
        framer.append(Array("{\"id\":".utf8))
        #expect(framer.next() == .needMore)
        framer.append(Array("1}".utf8))
        #expect(framer.next() == .needMore)
        framer.append(Array("\n{\"id\"".utf8))
        #expect(lines(&framer) == ["{\"id\":1}"])
        framer.append(Array(":2}\n".utf8))
        #expect(lines(&framer) == ["{\"id\":2}"])
        #expect(framer.next() == .needMore)
    }

    @Test func oneByteAtATime() {
        var framer = Framer(.newline, maximumBytes: 100)
        var found: [String] = []
        for byte in "a\nbc\r\nd\n".utf8 {
            framer.append([byte])
            found += lines(&framer)
        }
        #expect(found == ["a", "bc", "d"])
    }

    @Test func severalLinesInOneAppend() {
        var framer = Framer(.newline, maximumBytes: 100)
        framer.append(Array("one\ntwo\nthree\npartial".utf8))
        #expect(lines(&framer) == ["one", "two", "three"])
        #expect(framer.bufferedCount == "partial".utf8.count)
    }

    @Test func carriageReturnBeforeNewlineIsDropped() {
        var framer = Framer(.newline, maximumBytes: 100)
        framer.append(Array("a\r\nb\r\n".utf8))
        #expect(lines(&framer) == ["a", "b"])
    }

    @Test func aCarriageReturnSplitFromItsNewlineIsStillDropped() {
        var framer = Framer(.newline, maximumBytes: 100)
        framer.append(Array("a\r".utf8))
        #expect(framer.next() == .needMore)
        framer.append(Array("\n".utf8))
        #expect(lines(&framer) == ["a"])
    }

    @Test func blankLinesAreSkipped() {
        var framer = Framer(.newline, maximumBytes: 100)
        framer.append(Array("\n\r\n  \n\t\nx\n\n".utf8))
        #expect(lines(&framer) == ["x"])
        #expect(framer.next() == .needMore)
    }

    @Test func aLineExactlyAtTheLimitIsAccepted() {
        var framer = Framer(.newline, maximumBytes: 10)
        framer.append(Array(String(repeating: "a", count: 10).utf8))
        #expect(framer.next() == .needMore)
        framer.append(Array("\n".utf8))
        #expect(lines(&framer) == [String(repeating: "a", count: 10)])
    }

    @Test func aLineOneOverTheLimitIsTooLong() {
        var framer = Framer(.newline, maximumBytes: 10)
        framer.append(Array(String(repeating: "a", count: 11).utf8) + [UInt8(ascii: "\n")])
        #expect(framer.next() == .tooLong)
    }

    @Test func aLongLineIsDetectedBeforeItsNewlineArrives() {
        var framer = Framer(.newline, maximumBytes: 1024)
        for _ in 0..<4 {
            framer.append([UInt8](repeating: UInt8(ascii: "x"), count: 300))
        }
        #expect(framer.next() == .tooLong)
    }

    @Test func linesBeforeATooLongLineAreStillReturned() {
        var framer = Framer(.newline, maximumBytes: 5)
        framer.append(Array("ok\n123456789\n".utf8))
        #expect(framer.next() == .message(Array("ok".utf8)[...]))
        #expect(framer.next() == .tooLong)
    }

    @Test func manyLinesThroughALongStreamKeepTheirBytes() {
        var framer = Framer(.newline, maximumBytes: 64)
        var found: [String] = []
        for index in 0..<20_000 {
            framer.append(Array("line \(index)\n".utf8))
            found += lines(&framer)
        }
        #expect(found.count == 20_000)
        #expect(found.last == "line 19999")
    }

    // MARK: Varlink's NUL-terminated messages

    private func messages(_ framer: inout Framer) -> [String] {
        var found: [String] = []
        while case .message(let bytes) = framer.next() { found.append(String(decoding: bytes, as: UTF8.self)) }
        return found
    }

    @Test func splitsAtEachNulAndKeepsTheRest() {
        var framer = Framer(.nul, maximumBytes: 64)
        framer.append(Array(#"{"method":"a.B"}"#.utf8) + [0] + Array(#"{"method":"#.utf8))
        #expect(messages(&framer) == [#"{"method":"a.B"}"#])
        #expect(framer.next() == .needMore)
        framer.append(Array(#""c.D"}"#.utf8) + [0])
        #expect(messages(&framer) == [#"{"method":"c.D"}"#])
        #expect(framer.bufferedCount == 0)
    }

    @Test func aMessageInOneByteReadsIsWhole() {
        var framer = Framer(.nul, maximumBytes: 64)
        var found: [String] = []
        for byte in Array(#"{"x":1}"#.utf8) + [0] + Array("{}".utf8) + [0] {
            framer.append([byte])
            found += messages(&framer)
        }
        #expect(found == [#"{"x":1}"#, "{}"])
    }

    @Test func newlinesAreOrdinaryBytes() {
        var framer = Framer(.nul, maximumBytes: 64)
        framer.append(Array("{\n}\n".utf8) + [0])
        #expect(messages(&framer) == ["{\n}\n"])
    }

    @Test func aMessageAtTheLimitPassesAndOneByteMoreDoesNot() {
        var framer = Framer(.nul, maximumBytes: 8)
        framer.append(Array("12345678".utf8) + [0])
        #expect(messages(&framer) == ["12345678"])
        framer.append(Array("123456789".utf8))
        #expect(framer.next() == .tooLong)
    }

    @Test func anEndlessMessageIsTooLongBeforeItsNulArrives() {
        var framer = Framer(.nul, maximumBytes: 1024)
        framer.append([UInt8](repeating: UInt8(ascii: "a"), count: 1025))
        #expect(framer.next() == .tooLong)
    }

    @Test func decodesACallWithItsFlags() throws {
        let bytes = Array(#"{"method":"io.github.pwflagsd.Flags.Listen","parameters":{"keys":["a"]},"more":true}"#.utf8)
        let call = try VarlinkCall.decode(bytes[...]).get()
        #expect(call.interface == "io.github.pwflagsd.Flags")
        #expect(call.member == "Listen")
        #expect(call.parameters == ["keys": ["a"]])
        #expect(call.more && !call.oneway && !call.upgrade)
        #expect(try VarlinkCall.decode(call.encoded[...]).get() == call)
    }

    @Test(arguments: [
        ("not json", "io.github.pwflagsd.Flags.InvalidMessage"),
        (#"[1]"#, "io.github.pwflagsd.Flags.InvalidMessage"),
        (#"{"parameters":{}}"#, "io.github.pwflagsd.Flags.InvalidMessage"),
        (#"{"method":"a.B","more":"yes"}"#, "io.github.pwflagsd.Flags.InvalidMessage"),
        (#"{"method":"a.B","parameters":[]}"#, "org.varlink.service.InvalidParameter"),
    ])
    func refusesWhatIsNotACall(message: String, error: String) {
        guard case .failure(let failure) = VarlinkCall.decode(Array(message.utf8)[...]) else {
            Issue.record("decoded \(message)")
            return
        }
        #expect(failure.name == error)
    }

    @Test func repliesEndWithOneNul() throws {
        var output: [UInt8] = []
        VarlinkReply.write(parameters: ["a": 1], continues: true, to: &output)
        VarlinkReply.write(.invalidParameter("key"), to: &output)
        let parts = output.split(separator: 0, omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts[2].isEmpty)
        #expect(try JSONValue(parsing: Array(parts[0])) == ["continues": true, "parameters": ["a": 1]])
        #expect(
            try JSONValue(parsing: Array(parts[1]))
                == ["error": "org.varlink.service.InvalidParameter", "parameters": ["parameter": "key"]])
    }

    @Test func theLineProtocolsErrorsBecomeTheIDLsErrors() {
        #expect(VarlinkError(.invalidParams("key", "is missing"), method: "m") == .invalidParameter("key"))
        let refused = VarlinkError(.notPermitted("setUserId"), method: "m")
        #expect(refused.name == "io.github.pwflagsd.Flags.PermissionDenied")
        let refresh = VarlinkError(.refreshFailed(status: 503, reason: "HTTP status 503"), method: "m")
        #expect(refresh.parameters == ["status": 503, "reason": "HTTP status 503"])
        #expect(VarlinkError(.tooManyStateChanges(retryAfter: 1), method: "m").parameters == ["retryAfter": 1])
    }
}

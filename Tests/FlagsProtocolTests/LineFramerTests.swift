import FlagsProtocol
import TestSupport
import Testing

/// Line framing (docs/protocol.md): `\n`-terminated lines, `\r\n` tolerated, blank lines skipped, a length limit.
@Suite(.hangLimit) struct LineFramerTests {
    private func lines(_ framer: inout LineFramer) -> [String] {
        var found: [String] = []
        while case .line(let line) = framer.next() { found.append(String(decoding: line, as: UTF8.self)) }
        return found
    }

    @Test func aLineSplitAcrossAppendsIsReturnedWhole() {
        var framer = LineFramer(maximumLineBytes: 100)
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
        var framer = LineFramer(maximumLineBytes: 100)
        var found: [String] = []
        for byte in "a\nbc\r\nd\n".utf8 {
            framer.append([byte])
            found += lines(&framer)
        }
        #expect(found == ["a", "bc", "d"])
    }

    @Test func severalLinesInOneAppend() {
        var framer = LineFramer(maximumLineBytes: 100)
        framer.append(Array("one\ntwo\nthree\npartial".utf8))
        #expect(lines(&framer) == ["one", "two", "three"])
        #expect(framer.bufferedCount == "partial".utf8.count)
    }

    @Test func carriageReturnBeforeNewlineIsDropped() {
        var framer = LineFramer(maximumLineBytes: 100)
        framer.append(Array("a\r\nb\r\n".utf8))
        #expect(lines(&framer) == ["a", "b"])
    }

    @Test func aCarriageReturnSplitFromItsNewlineIsStillDropped() {
        var framer = LineFramer(maximumLineBytes: 100)
        framer.append(Array("a\r".utf8))
        #expect(framer.next() == .needMore)
        framer.append(Array("\n".utf8))
        #expect(lines(&framer) == ["a"])
    }

    @Test func blankLinesAreSkipped() {
        var framer = LineFramer(maximumLineBytes: 100)
        framer.append(Array("\n\r\n  \n\t\nx\n\n".utf8))
        #expect(lines(&framer) == ["x"])
        #expect(framer.next() == .needMore)
    }

    @Test func aLineExactlyAtTheLimitIsAccepted() {
        var framer = LineFramer(maximumLineBytes: 10)
        framer.append(Array(String(repeating: "a", count: 10).utf8))
        #expect(framer.next() == .needMore)
        framer.append(Array("\n".utf8))
        #expect(lines(&framer) == [String(repeating: "a", count: 10)])
    }

    @Test func aLineOneOverTheLimitIsTooLong() {
        var framer = LineFramer(maximumLineBytes: 10)
        framer.append(Array(String(repeating: "a", count: 11).utf8) + [UInt8(ascii: "\n")])
        #expect(framer.next() == .tooLong)
    }

    @Test func aLongLineIsDetectedBeforeItsNewlineArrives() {
        var framer = LineFramer(maximumLineBytes: 1024)
        for _ in 0..<4 {
            framer.append([UInt8](repeating: UInt8(ascii: "x"), count: 300))
        }
        #expect(framer.next() == .tooLong)
    }

    @Test func linesBeforeATooLongLineAreStillReturned() {
        var framer = LineFramer(maximumLineBytes: 5)
        framer.append(Array("ok\n123456789\n".utf8))
        #expect(framer.next() == .line(Array("ok".utf8)[...]))
        #expect(framer.next() == .tooLong)
    }

    @Test func manyLinesThroughALongStreamKeepTheirBytes() {
        var framer = LineFramer(maximumLineBytes: 64)
        var found: [String] = []
        for index in 0..<20_000 {
            framer.append(Array("line \(index)\n".utf8))
            found += lines(&framer)
        }
        #expect(found.count == 20_000)
        #expect(found.last == "line 19999")
    }
}

import FlagsCore
import TestSupport
import Testing

@Suite(.hangLimit) struct JSONValueTests {
    @Test(arguments: [
        ("{}", JSONValue.object([:])),
        ("[1,2.5,-3e2]", JSONValue.array([1, 2.5, -300])),
        (#"{"a":true,"b":null,"c":"x\ny\u00e9\ud83d\ude00"}"#, JSONValue.object(["a": true, "b": nil, "c": "x\nyé😀"])),
        ("  false ", JSONValue.bool(false)),
    ])
    func parsesValidJSON(text: String, expected: JSONValue) throws {
        #expect(try JSONValue(parsing: text) == expected)
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":}", "01", "1.", "-", "tru", "\"abc", "{\"a\" 1}", "[1] x", "\"\\x\"", "\"\\ud800\"",
        "1e999", "\"a\u{01}\"", "{a:1}", "NaN",
    ])
    func rejectsInvalidJSON(text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
    }

    @Test func rejectsInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xFF, 0xFE, 0x22]
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: bytes) }
    }

    @Test func rejectsNestingDeeperThanTheLimit() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: deep) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: Never.self) { try JSONValue(parsing: fine) }
    }

    @Test func serializesCompactlyWithSortedMembersAndEscapes() {
        let value: JSONValue = ["b": [1, 2.5, true, nil], "a": "line\nbreak \"quoted\" \u{01}"]
        #expect(value.serialized() == #"{"a":"line\nbreak \"quoted\" \u0001","b":[1,2.5,true,null]}"#)
    }

    @Test func integersPrintWithoutAFraction() {
        #expect(JSONValue.number(5).serialized() == "5")
        #expect(JSONValue.number(-0.5).serialized() == "-0.5")
        #expect(JSONValue.number(1e20).serialized() == "1e+20")
    }

    @Test func roundTripsThroughText() throws {
        let value: JSONValue = ["k": ["nested": [1, "two", ["three": false]]], "e": "é😀\t"]
        #expect(try JSONValue(parsing: value.serialized()) == value)
    }
}

import FlagsCore
import FlagsProtocol
import TestSupport
import Testing

/// Responses and notifications: compact lines that decode to what was encoded, never a raw newline inside.
@Suite(.hangLimit) struct MessageTests {
    static let awkward = [
        "line\nbreak", "cr\rlf\r\n", "tab\tand \"quotes\" and \\", "\u{2028}\u{2029}", "\u{0}nul", "émoji 😀", "",
    ]

    static let flag = Flag(
        key: "multi\nline",
        isEnabled: true,
        ruleId: "r_\n1",
        properties: ["text": "a\nb", "nested": ["list": ["x\ny", 1, true, nil]]]
    )

    /// Checks that `bytes` is one line: ends with the only newline it holds.
    private func expectOneLine(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(bytes.last == UInt8(ascii: "\n"), sourceLocation: sourceLocation)
        #expect(bytes.filter { $0 == UInt8(ascii: "\n") }.count == 1, sourceLocation: sourceLocation)
        #expect(!bytes.dropLast().contains(UInt8(ascii: "\r")), sourceLocation: sourceLocation)
    }

    @Test(arguments: awkward)
    func resultRoundTripsAndStaysOneLine(text: String) throws {
        var output: [UInt8] = []
        let result: JSONValue = ["value": .string(text), "list": [.string(text)]]
        Message.writeResult(id: .string(text), result: result, to: &output)
        expectOneLine(output)
        let message = try #require(IncomingMessage(line: output.dropLast()))
        #expect(message == .response(id: .string(text), result: .success(result)))
    }

    @Test(arguments: awkward)
    func errorRoundTripsAndStaysOneLine(text: String) throws {
        var output: [UInt8] = []
        let error = RPCError(code: -32602, message: text, data: ["param": .string(text)])
        Message.writeError(id: 12, error: error, to: &output)
        expectOneLine(output)
        let message = try #require(IncomingMessage(line: output.dropLast()))
        #expect(message == .response(id: 12, result: .failure(error)))
    }

    @Test func responseIsCompactWithTheVersion() throws {
        var output: [UInt8] = []
        Message.writeResult(id: 1, result: ["flag": nil], to: &output)
        #expect(String(decoding: output, as: UTF8.self) == #"{"jsonrpc":"2.0","id":1,"result":{"flag":null}}"# + "\n")
    }

    @Test func errorLineCarriesCodeMessageAndData() throws {
        var output: [UInt8] = []
        Message.writeError(id: .null, error: .parseError("x"), to: &output)
        let value = try JSONValue(parsing: Array(output.dropLast()))
        #expect(value["jsonrpc"] == "2.0")
        #expect(value["id"] == .null)
        #expect(value["error"]?["code"] == -32700)
    }

    @Test(arguments: awkward)
    func flagsChangedRoundTripsAndStaysOneLine(text: String) throws {
        var flag = Self.flag
        flag.properties["awkward"] = .string(text)
        let change = FlagsChanged(subscription: "s\n1", revision: 43, changed: [flag], removed: [text, "old_key"])
        var output: [UInt8] = []
        change.write(to: &output)
        expectOneLine(output)
        let message = try #require(IncomingMessage(line: output.dropLast()))
        guard case .notification(let method, let params) = message else {
            Issue.record("not a notification: \(message)")
            return
        }
        #expect(method == "flagsChanged")
        #expect(FlagsChanged(params: params) == change)
    }

    @Test func flagsChangedHasTheShapeOfPROTOCOL() throws {
        let change = FlagsChanged(
            subscription: "s1",
            revision: 43,
            changed: [Flag(key: "k", isEnabled: true, ruleId: "r_1", properties: [:])],
            removed: ["old_key"]
        )
        var output: [UInt8] = []
        change.write(to: &output)
        let expected =
            #"{"jsonrpc":"2.0","method":"flagsChanged","params":{"subscription":"s1","revision":43,"#
            + #""changed":[{"key":"k","enabled":true,"ruleId":"r_1","properties":{}}],"removed":["old_key"]}}"#
        #expect(String(decoding: output, as: UTF8.self) == expected + "\n")
    }

    @Test func flagsChangedCarriesTheEpochBeforeTheRevision() throws {
        let change = FlagsChanged(subscription: "s1", epoch: "e1", revision: 2, changed: [], removed: ["k"])
        var output: [UInt8] = []
        change.write(to: &output)
        let text = String(decoding: output, as: UTF8.self)
        #expect(text.contains(#""subscription":"s1","epoch":"e1","revision":2,"#))
        let params = try #require(try JSONValue(parsing: output.dropLast())["params"])
        #expect(FlagsChanged(params: params) == change)
    }

    @Test func flagWireFormRoundTrips() throws {
        let bytes = Self.flag.wireBytes
        #expect(!bytes.contains(UInt8(ascii: "\n")))
        let value = try JSONValue(parsing: bytes)
        #expect(value == Self.flag.wireValue)
        #expect(Flag(wire: value) == Self.flag)
    }

    @Test func flagListingRoundTrips() throws {
        var output: [UInt8] = []
        Message.writeResult(id: 1, to: &output) { body in
            body.append(contentsOf: #"{"subscription":"s2","revision":7,"flags":"#.utf8)
            body.append(UInt8(ascii: "["))
            body.append(contentsOf: Self.flag.wireBytes)
            body.append(contentsOf: "]}".utf8)
        }
        expectOneLine(output)
        guard case .response(_, .success(let result))? = IncomingMessage(line: output.dropLast()) else {
            Issue.record("not a result")
            return
        }
        #expect(FlagListing(result: result) == FlagListing(revision: 7, flags: [Self.flag], subscription: "s2"))
    }

    @Test(arguments: ["", "not json", "[]", #"{"id":1}"#, #"{"id":1,"error":{"code":"x","message":"m"}}"#])
    func linesThatAreNeitherResponseNorNotificationAreRejected(line: String) {
        #expect(IncomingMessage(line: Array(line.utf8)) == nil)
    }
}

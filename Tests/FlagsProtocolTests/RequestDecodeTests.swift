import FlagsCore
import FlagsProtocol
import TestSupport
import Testing

/// The request envelope of docs/protocol.md, as `Request.decode` checks it.
@Suite(.hangLimit) struct RequestDecodeTests {
    private func decode(_ text: String) -> Result<Request, Request.Failure> {
        Request.decode(Array(text.utf8))
    }

    @Test(arguments: [
        #"{"jsonrpc":"2.0","id":1,"method":"get","params":{"key":"a"}}"#,
        #"{"id":1,"method":"get","params":{"key":"a"}}"#,
    ])
    func jsonrpcMayBeLeftOut(line: String) throws {
        let request = try decode(line).get()
        #expect(request == Request(id: 1, method: "get", params: ["key": "a"]))
    }

    @Test(arguments: [#""1.0""#, "2", "2.0", "null", #""2.0 ""#])
    func jsonrpcOtherThan2Point0IsInvalid(version: String) {
        let result = decode(#"{"jsonrpc":\#(version),"id":"x","method":"status"}"#)
        guard case .failure(let failure) = result else {
            Issue.record("accepted jsonrpc \(version)")
            return
        }
        #expect(failure.error.code == RPCError.invalidRequestCode)
        #expect(failure.id == "x")
    }

    @Test(arguments: [(#""abc""#, JSONValue.string("abc")), ("7", .number(7)), ("-2.5", .number(-2.5)), (#""""#, "")])
    func stringAndNumberIdsAreEchoed(text: String, id: JSONValue) throws {
        let request = try decode(#"{"id":\#(text),"method":"status"}"#).get()
        #expect(request.id == id)
    }

    @Test(arguments: ["null", "true", "[1]", #"{"a":1}"#])
    func otherIdTypesAreInvalidAndAnsweredWithNullId(text: String) {
        guard case .failure(let failure) = decode(#"{"id":\#(text),"method":"status"}"#) else {
            Issue.record("accepted id \(text)")
            return
        }
        #expect(failure.error.code == RPCError.invalidRequestCode)
        #expect(failure.id == .null)
    }

    @Test func aRequestWithoutIdIsANotification() throws {
        let request = try decode(#"{"jsonrpc":"2.0","method":"refresh"}"#).get()
        #expect(request.id == nil)
        #expect(request.method == "refresh")
    }

    @Test(arguments: [#"{"id":1,"method":"getAll"}"#, #"{"id":1,"method":"getAll","params":null}"#])
    func missingParamsReadAsEmpty(line: String) throws {
        #expect(try decode(line).get().params.isEmpty)
    }

    @Test func paramsObjectIsKept() throws {
        let request = try decode(#"{"id":1,"method":"isEnabled","params":{"key":"k","default":true}}"#).get()
        #expect(request.params == ["key": "k", "default": true])
    }

    @Test(arguments: ["[]", "1", #""p""#, "true"])
    func paramsThatAreNotAnObjectAreInvalidParams(params: String) {
        guard case .failure(let failure) = decode(#"{"id":3,"method":"get","params":\#(params)}"#) else {
            Issue.record("accepted params \(params)")
            return
        }
        #expect(failure.error.code == RPCError.invalidParamsCode)
        #expect(failure.error.data?["param"] == "params")
        #expect(failure.id == 3)
    }

    @Test(arguments: ["[]", "[1,2]", "1", #""text""#, "null", "true"])
    func jsonThatIsNotAnObjectIsAnInvalidRequest(line: String) {
        guard case .failure(let failure) = decode(line) else {
            Issue.record("accepted \(line)")
            return
        }
        #expect(failure.error.code == -32600)
        #expect(failure.id == .null)
    }

    @Test(arguments: [#"{"id":1}"#, #"{"id":1,"method":5}"#, #"{"id":1,"method":null}"#])
    func aMissingOrNonStringMethodIsAnInvalidRequest(line: String) {
        guard case .failure(let failure) = decode(line) else {
            Issue.record("accepted \(line)")
            return
        }
        #expect(failure.error.code == -32600)
        #expect(failure.id == 1)
    }

    @Test(arguments: ["not json", "{", #"{"id":1,"method":"get""#, "", "\u{1}"])
    func textThatIsNotJSONIsAParseErrorWithNullId(line: String) {
        guard case .failure(let failure) = decode(line) else {
            Issue.record("accepted \(line)")
            return
        }
        #expect(failure.error.code == -32700)
        #expect(failure.id == .null)
    }

    @Test func invalidUTF8IsAParseError() {
        guard case .failure(let failure) = Request.decode([0x7B, 0xFF, 0x00, 0xC3, 0x7D]) else {
            Issue.record("accepted invalid UTF-8")
            return
        }
        #expect(failure.error.code == -32700)
    }

    @Test func anEncodedRequestDecodesToItself() throws {
        let request = Request(id: "r-1", method: "listen", params: ["keys": ["a", "B"]])
        let encoded = request.encoded()
        #expect(encoded.last == UInt8(ascii: "\n"))
        #expect(try Request.decode(encoded.dropLast()).get() == request)
    }
}

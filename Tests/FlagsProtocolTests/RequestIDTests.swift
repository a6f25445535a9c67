import FlagsCore
import FlagsProtocol
import TestSupport
import Testing

/// `RequestID`: the id of a request line as its JSON text, found in the line the general path decoded.
@Suite(.hangLimit) struct RequestIDTests {
    private func echoed(_ line: String) -> String? {
        let bytes = Array(line.utf8)
        guard case .success(let request) = Request.decode(bytes[...]) else { return nil }
        return RequestID(echoing: request.id, in: bytes[...]).map { String(decoding: $0.text, as: UTF8.self) }
    }

    @Test(arguments: [
        ("9007199254740993", #"{"id":9007199254740993,"method":"get"}"#),
        ("1.50", #"{ "method":"get", "id" :  1.50 }"#),
        (#""a\"b\u00e9""#, #"{"id":"a\"b\u00e9","method":"get"}"#),
        ("2", #"{"id":1,"method":"get","id":2}"#),
        ("-1E+3", #"{"params":{"id":7,"x":[1,{"id":8}]},"id":-1E+3,"method":"get"}"#),
    ])
    func theIdIsItsTextAsSent(expected: String, line: String) {
        #expect(echoed(line) == expected)
    }

    @Test func aNotificationHasNoIdAndAnUnreadableRequestIsAnsweredWithNull() {
        #expect(echoed(#"{"method":"get"}"#) == nil)
        #expect(RequestID(echoing: .null, in: ArraySlice("{}".utf8)) == .unreadable)
        #expect(String(decoding: RequestID.unreadable.text, as: UTF8.self) == "null")
    }

    @Test func aValueBuiltInCodeIsItsCompactText() {
        #expect(String(decoding: RequestID(.string("x\n")).text, as: UTF8.self) == #""x\n""#)
    }
}

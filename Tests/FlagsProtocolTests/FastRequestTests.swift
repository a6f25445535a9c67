import FlagsCore
import TestSupport
import Testing

@testable import FlagsProtocol

/// The fast scanner may only ever agree with the general path, or step aside.
@Suite(.hangLimit) struct FastRequestTests {
    static let recognised: [String] = [
        #"{"id":1,"method":"get","params":{"key":"new_checkout"}}"#,
        #"{"jsonrpc":"2.0","id":"a-b c","method":"get","params":{"key":"é😀"}}"#,
        #" { "method" : "get" , "params" : { "key" : "k" } , "id" : -42 } "#,
        #"{"id":7,"method":"isEnabled","params":{"key":"k","default":true}}"#,
        #"{"id":7,"method":"isEnabled","params":{"default":false,"key":"k"}}"#,
        #"{"id":7,"method":"isEnabled","params":{"key":"k"}}"#,
        #"{"id":0,"method":"getAll"}"#,
        #"{"id":123456789012345,"method":"getAll","params":{}}"#,
    ]

    static let leftToTheGeneralPath: [String] = [
        #"{"id":1,"method":"get","params":{"key":"new\u005fcheckout"}}"#,
        #"{"id":1.5,"method":"get","params":{"key":"k"}}"#,
        #"{"id":1e3,"method":"get","params":{"key":"k"}}"#,
        #"{"id":-0,"method":"get","params":{"key":"k"}}"#,
        #"{"id":01,"method":"get","params":{"key":"k"}}"#,
        #"{"id":1234567890123456,"method":"get","params":{"key":"k"}}"#,
        #"{"id":null,"method":"get","params":{"key":"k"}}"#,
        #"{"id":"\u0041","method":"get","params":{"key":"k"}}"#,
        #"{"method":"get","params":{"key":"k"}}"#,
        #"{"id":1,"method":"get","params":{"key":"k"},"extra":1}"#,
        #"{"id":1,"id":2,"method":"get","params":{"key":"k"}}"#,
        #"{"id":1,"method":"get","params":{"key":"a","key":"b"}}"#,
        #"{"id":1,"method":"get","params":{"key":5}}"#,
        #"{"id":1,"method":"get","params":{"key":"k","default":true}}"#,
        #"{"id":1,"method":"get"}"#,
        #"{"id":1,"method":"get","params":{"key":"k"}} trailing"#,
        #"{"id":1,"method":"get","params":{"key":"k"},}"#,
        #"{"id":1,"jsonrpc":"1.0","method":"get","params":{"key":"k"}}"#,
        #"{"id":1,"method":"refresh"}"#,
        #"{"id":1,"method":"getAll","params":{"key":"k"}}"#,
        #"{"id":1,"method":"isEnabled","params":{"key":"k","default":1}}"#,
        #"[1]"#,
        "not json",
        // Lines that end where the id's value should start (these once read past the end of the line).
        #"{"id":"#,
        #"{"id":-"#,
        #"{"method":"get","id": "#,
    ]

    @Test("The plain shapes are recognised", arguments: recognised)
    func recognises(line: String) {
        #expect(FastRequest.scan(ArraySlice(line.utf8)) != nil)
    }

    @Test("Anything else is left to the general path", arguments: leftToTheGeneralPath)
    func stepsAside(line: String) {
        #expect(FastRequest.scan(ArraySlice(line.utf8)) == nil)
    }

    @Test("What the scanner recognises, the general path reads the same way", arguments: recognised)
    func agreesWithTheGeneralPath(line: String) throws {
        let fast = try #require(FastRequest.scan(ArraySlice(line.utf8)))
        let request = try Request.decode(Array(line.utf8)).get()
        let call = try Call(method: request.method, params: request.params)
        switch fast {
        case .get(let id, let key):
            #expect(call == .get(key: key))
            #expect(try JSONValue(parsing: Array(id)) == request.id)
        case .isEnabled(let id, let key, let fallback):
            #expect(call == .isEnabled(key: key, default: fallback))
            #expect(try JSONValue(parsing: Array(id)) == request.id)
        case .getAll(let id):
            #expect(call == .getAll)
            #expect(try JSONValue(parsing: Array(id)) == request.id)
        }
    }

    static let varlinkRecognised: [String] = [
        #"{"method":"io.github.pwflagsd.Flags.Get","parameters":{"key":"new_checkout"}}"#,
        #" { "parameters" : { "key" : "é😀" } , "method" : "io.github.pwflagsd.Flags.Get" } "#,
        #"{"method":"io.github.pwflagsd.Flags.Get","parameters":{"key":""}}"#,
    ]

    static let varlinkLeftToTheGeneralPath: [String] = [
        #"{"method":"io.github.pwflagsd.Flags.Get","parameters":{"key":"new\u005fcheckout"}}"#,
        #"{"method":"io.github.pwflagsd.Flags.Get","parameters":{"key":"k"},"oneway":true}"#,
        #"{"method":"io.github.pwflagsd.Flags.Get","parameters":{"key":"k"},"more":false}"#,
        #"{"method":"io.github.pwflagsd.Flags.Get","parameters":{"key":"k","default":true}}"#,
        #"{"method":"io.github.pwflagsd.Flags.Get","parameters":{"key":"a","key":"b"}}"#,
        #"{"method":"io.github.pwflagsd.Flags.Get","parameters":{"key":5}}"#,
        #"{"method":"io.github.pwflagsd.Flags.Get","parameters":{}}"#,
        #"{"method":"io.github.pwflagsd.Flags.Get"}"#,
        #"{"method":"io.github.pwflagsd.Flags.GetAll","parameters":{"key":"k"}}"#,
        #"{"method":"io.github.pwflagsd.Flags.Get","method":"x","parameters":{"key":"k"}}"#,
        #"{"method":"io.github.pwflagsd.Flags.Get","parameters":{"key":"k"}} trailing"#,
        #"{"method":"io.github.pwflagsd.Flags.Get","parameters":{"key":"k"},}"#,
        #"{"id":1,"method":"get","params":{"key":"k"}}"#,
        #"{"#,
        "",
    ]

    @Test("A Varlink Get in its plain shape is recognised", arguments: varlinkRecognised)
    func recognisesVarlinkGet(message: String) {
        #expect(FastRequest.varlinkGetKey(ArraySlice(message.utf8)) != nil)
    }

    @Test("Any other Varlink message is left to the general path", arguments: varlinkLeftToTheGeneralPath)
    func stepsAsideForVarlink(message: String) {
        #expect(FastRequest.varlinkGetKey(ArraySlice(message.utf8)) == nil)
    }

    @Test("The Varlink Get the scanner reads is the call the general path reads", arguments: varlinkRecognised)
    func varlinkAgreesWithTheGeneralPath(message: String) throws {
        let key = try #require(FastRequest.varlinkGetKey(ArraySlice(message.utf8)))
        let call = try VarlinkCall.decode(ArraySlice(message.utf8)).get()
        #expect(call.method == "io.github.pwflagsd.Flags.Get")
        #expect(!call.more && !call.oneway && !call.upgrade)
        #expect(try Call(method: "get", params: call.parameters) == .get(key: key))
    }
}

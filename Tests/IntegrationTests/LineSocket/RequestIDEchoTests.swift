import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Request ids come back exactly as sent, byte for byte, on every path: the fast path, the general path, errors
/// and the methods answered later.
@Suite(.hangLimit) struct RequestIDEchoTests {
    static let ids = [
        "9007199254740993", "-9007199254740993", "123456789012345678901234567890", "0", "-0", "1.50", "0.1",
        "-12.5e-3", "1e3", "1E+300", "2.0", #""a\"b\\c""#, #""caf\u00e9\n\t""#, #""\ud83d\ude00""#, #""é""#,
        #""""#, #""\/""#,
    ]

    static let requests = [
        // The fast path's shapes.
        #"{"id":ID,"method":"get","params":{"key":"dark_mode"}}"#,
        #"{"id":ID,"method":"isEnabled","params":{"key":"dark_mode"}}"#,
        #"{"id":ID,"method":"getAll"}"#,
        // The general path: a member the fast path leaves alone, whitespace, errors, a method answered later.
        #"{"jsonrpc":"2.0","method":"get","params":{"key":"dark_mode"},"id" : ID }"#,
        #"{"id":ID,"method":"status","params":{}}"#,
        #"{"id":ID,"method":"nope"}"#,
        #"{"id":ID,"method":"get","params":{}}"#,
        #"{"id":ID,"method":"get","params":{"key":"dark_mode"},"jsonrpc":"1.0"}"#,
        #"{"id":ID,"method":"refresh"}"#,
        #"{"id":ID,"method":"listen","params":{"keys":["dark_mode"]}}"#,
    ]

    @Test(arguments: ids)
    func theIdComesBackAsSent(id: String) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        for template in Self.requests {
            let line = template.replacingOccurrences(of: "ID", with: id)
            try client.send(line: line)
            let answer = try #require(client.readLine(), "no answer to \(line)")
            let prefix = #"{"jsonrpc":"2.0","id":\#(id),"#
            #expect(answer.hasPrefix(prefix), "\(line) -> \(answer.prefix(120))")
        }
    }
}

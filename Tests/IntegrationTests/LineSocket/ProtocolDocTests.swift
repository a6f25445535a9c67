import Foundation
import TestSupport
import Testing

/// docs/protocol.md's exchanges, held to the bytes: every `→`/`←` block marked `<!-- replayed on the demo
/// flags -->` is sent line by line, on one connection, to a new daemon serving `config/demo-flags.json`, and each
/// answer must be the `←` line that follows, byte for byte. Only what differs at every start or every second is
/// masked, in both: the epoch, times and ages.
@Suite(.hangLimit) struct ProtocolDocTests {
    static let marker = "<!-- replayed on the demo flags -->\n```\n"

    /// The marked blocks' lines, in order.
    static func blocks(in page: String) -> [[String]] {
        page.components(separatedBy: marker).dropFirst().map { rest in
            let block = rest.components(separatedBy: "\n```").first ?? ""
            return block.split(separator: "\n").map(String.init)
        }
    }

    static func masked(_ line: String) -> String {
        line.replacing(/"[0-9a-f]{32}"/, with: "\"EPOCH\"")
            .replacing(/"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"/, with: "\"TIME\"")
            .replacing(/"ageSeconds":[0-9.e+-]+/, with: "\"ageSeconds\":AGE")
    }

    @Test func theMarkedExchangesAreTheBytesTheDaemonSends() throws {
        let page = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
        let blocks = Self.blocks(in: page)
        #expect(blocks.count >= 3)
        let flags = Repository.path("config/demo-flags.json")
        for lines in blocks {
            let daemon = try DaemonProcess(config: "[FeatureFlags]\nLocalFlagsFile=\(flags)\n")
            defer { daemon.cleanUp() }
            let client = try RawClient(socketPath: daemon.socketPath)
            for (index, line) in lines.enumerated() where line.hasPrefix("→ ") {
                try client.send(line: String(line.dropFirst(2)))
                let expected = lines.dropFirst(index + 1).first { !$0.hasPrefix("  ") } ?? ""
                try #require(expected.hasPrefix("← "), "\(line) has no answer in the page")
                let answer = try #require(client.readLine(), "no answer to \(line)")
                #expect(Self.masked(answer) == Self.masked(String(expected.dropFirst(2))), "\(line)")
            }
        }
    }
}

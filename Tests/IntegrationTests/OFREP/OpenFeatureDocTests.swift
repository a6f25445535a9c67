import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// docs/openfeature.md's raw exchanges, held to the bytes: each fenced block that starts with a request line is
/// sent as written (lines ending in CRLF) to a daemon run from the shipped `config/demo-ofrep.conf`, and the
/// answer must be the block's rest, byte for byte. Only what changes at every start is masked, in both: the
/// event stream's channel (random) and so the bulk answer's `ETag`. The Python example's shipped daemon
/// configuration and flags are checked too, so that a newcomer who runs them gets the page's output.
@Suite(.hangLimit) struct OpenFeatureDocTests {
    struct Exchange: CustomStringConvertible {
        var request: String
        var expected: String
        var description: String { request.prefix { $0 != "\n" }.description }
    }

    /// Every fenced block whose first line is a request: the request (head, blank line, body of
    /// `Content-Length` bytes on the next line), a blank line, then the answer.
    static func exchanges(in page: String) -> [Exchange] {
        let blocks = page.components(separatedBy: "```\n").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        return blocks.compactMap { block -> Exchange? in
            guard block.firstMatch(of: /^(POST|GET|OPTIONS) \/\S* HTTP\/1\.1\n/) != nil,
                let headEnd = block.range(of: "\n\n")
            else { return nil }
            let head = String(block[..<headEnd.lowerBound])
            let length = head.firstMatch(of: /Content-Length: ([0-9]+)/).flatMap { Int($0.output.1) } ?? 0
            let rest = block[headEnd.upperBound...]
            let body = String(decoding: Array(rest.utf8.prefix(length)), as: UTF8.self)
            var expected = String(decoding: Array(rest.utf8.dropFirst(length)), as: UTF8.self)
            while expected.hasPrefix("\n") { expected.removeFirst() }
            let request = head.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n\r\n" + body
            return Exchange(request: request, expected: expected)
        }
    }

    /// The answer to `request` on a new connection, as text with LF line ends: the head, and the body its
    /// `Content-Length` announces.
    static func exchange(_ request: String, socketPath: String) throws -> String {
        let client = try HTTPClient(unixSocket: socketPath)
        try #require(client.send(request))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let head = text[..<end.lowerBound]
                let length = head.firstMatch(of: /Content-Length: ([0-9]+)/).flatMap { Int($0.output.1) } ?? 0
                if received.count >= text[..<end.upperBound].utf8.count + length {
                    return String(text[..<end.lowerBound]).replacingOccurrences(of: "\r\n", with: "\n") + "\n\n"
                        + String(text[end.upperBound...])
                }
            }
            var poller = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) >= 0 else { break }
            guard poller.revents != 0 else { continue }
            let count = read(client.fd, &buffer, buffer.count)
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// The channel and the bulk answer's tag, which change at every start.
    static func masked(_ text: String) -> String {
        text.replacing(/channel=[0-9a-f]{32}/, with: "channel=CHANNEL")
            .replacing(/"[0-9a-f]{16}-933"/, with: "\"BULK-TAG\"").trimmingCharacters(in: .newlines)
    }

    @Test func theRawExchangesAreTheBytesTheDaemonSends() throws {
        let page = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/openfeature.md"), encoding: .utf8)
        let exchanges = Self.exchanges(in: page)
        #expect(exchanges.count >= 5, "\(exchanges)")
        let directory = try TemporaryDirectory()
        try FileManager.default.copyItem(
            atPath: Repository.path("config/demo-flags.json"),
            toPath: directory.file("demo-flags.json"))
        let shipped = try String(
            contentsOf: Repository.root.appendingPathComponent("config/demo-ofrep.conf"), encoding: .utf8)
        let ofrep = directory.file("ofrep.sock")
        let daemon = try DaemonProcess(
            config: shipped.replacingOccurrences(of: "/tmp/pwflagsd-demo-ofrep.sock", with: ofrep),
            directory: directory)
        defer { daemon.cleanUp() }
        var bulkTag: String?
        for exchange in exchanges {
            // The 304 example sends the tag the bulk example received: this run's, not the page's.
            var request = exchange.request
            if let bulkTag { request = request.replacing(/"[0-9a-f]{16}-933"/, with: bulkTag) }
            let answer = try Self.exchange(request, socketPath: ofrep)
            if bulkTag == nil, let tag = answer.firstMatch(of: /ETag: ("[0-9a-f]{16}-933")/) {
                bulkTag = String(tag.output.1)
            }
            #expect(Self.masked(answer) == Self.masked(exchange.expected), "\(exchange)")
        }
    }

    @Test func thePythonExamplesDaemonServesTheFlagsItsOutputShows() throws {
        let directory = Repository.root.appendingPathComponent("Tests/OpenFeature")
        let flags = try JSONValue(
            parsing: Array(try Data(contentsOf: directory.appendingPathComponent("ofrep_example_flags.json"))))
        let served = try JSONValue(parsing: LocalFlags.text(OFREPRig.flags))
        #expect(flags == served)
        let check = try Command.run(
            DaemonProcess.executable("pwflagsd"),
            ["--check-config", "--config", directory.appendingPathComponent("ofrep_example.conf").path], check: false)
        #expect(check.status == 0, "\(check)")
        #expect(check.stdout.contains("ListenAddress=127.0.0.1:8016"), "\(check)")
    }
}

import FlagsCore
import Foundation
import OFREP
import TestSupport
import Testing

/// Fuzzes the listener's HTTP parser and the OFREP responder for a bounded time, from the checked-in corpus
/// (`Tests/Fuzz/http-corpus`), like the line protocol's fuzzer (same `PWFLAGS_FUZZ_SECONDS` and
/// `PWFLAGS_FUZZ_SEED`).
///
/// The properties, whatever the bytes: nothing traps; the input read in random pieces gives the same requests
/// and refusals as read at once; a refusal is the last event and has a 4xx/5xx status; no body is over the
/// limit; every answer states its length, and its body is JSON.
@Suite(.hangLimit(fuzzingFor: "PWFLAGS_FUZZ_SECONDS")) struct HTTPFuzzTests {
    /// `Tests/Fuzz/http-corpus`, beside the line protocol's corpus.
    static let corpus = FuzzCorpus.seeds(
        in: URL(fileURLWithPath: FuzzCorpus.directory).deletingLastPathComponent().appendingPathComponent(
            "http-corpus"
        ).path)

    static let tokens: [[UInt8]] = [
        "\r\n", "\n", "\r\n\r\n", " ", ":", "POST ", "GET ", " HTTP/1.1", " HTTP/1.0", " HTTP/2.0", "Content-Length: ",
        "Content-Length: 0\r\n", "content-length:2\r\n", "Transfer-Encoding: chunked\r\n", "Expect: 100-continue\r\n",
        "Connection: close\r\n", "If-None-Match: *\r\n", "Authorization: Bearer x\r\n", "/ofrep/v1/evaluate/flags",
        "/ofrep/v1/evaluate/flags/", "%", "%2", "%C3%A9", "%FF", "?", "0", "1", "65536", "99999999999999999999",
        "{}", "{\"context\":{}}", "{\"context\":{\"targetingKey\":\"u\"}}", "\t", "\u{0}",
    ].map { Array($0.utf8) }

    static var duration: Duration {
        let seconds = ProcessInfo.processInfo.environment["PWFLAGS_FUZZ_SECONDS"].flatMap(Double.init) ?? 3
        return .milliseconds(Int(seconds * 1000))
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["PWFLAGS_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x0F4E_F00D
    }

    static let flags = OFREPFlags(
        FlagSet([
            Flag(key: "new_checkout", isEnabled: true, ruleId: "r_1", properties: ["color": "green", "n": 2]),
            Flag(key: "a", isEnabled: false, ruleId: "default"), Flag(key: "k", isEnabled: false, ruleId: ""),
        ]))

    /// What a parser gives for the input, fed in pieces whose sizes `random` picks (nil: all at once).
    static func events(_ input: [UInt8], head: Int, body: Int, random: inout SeededGenerator?) -> [HTTPRequestParser
        .Event]
    {
        var parser = HTTPRequestParser(maximumHeadBytes: head, maximumBodyBytes: body)
        var events: [HTTPRequestParser.Event] = []
        var offset = 0
        repeat {
            let size: Int
            if var generator = random {
                size = min(input.count - offset, 1 + generator.below(64))
                random = generator
            } else {
                size = input.count
            }
            parser.append(input[offset..<offset + size])
            offset += size
            reading: while true {
                let event = parser.next()
                switch event {
                case .incomplete: break reading
                case .continueExpected: continue
                case .request: events.append(event)
                case .failure:
                    events.append(event)
                    return events
                }
            }
        } while offset < input.count
        return events
    }

    /// Checks `input`; returns what went wrong, or nil.
    static func check(_ input: [UInt8], random: inout SeededGenerator) -> String? {
        let head = [64, 256, 8192][random.below(3)]
        let body = [16, 1024, 65536][random.below(3)]
        var none: SeededGenerator? = nil
        var pieces: SeededGenerator? = SeededGenerator(seed: random.next())
        let whole = events(input, head: head, body: body, random: &none)
        let split = events(input, head: head, body: body, random: &pieces)
        guard whole == split else { return "read at once: \(whole); in pieces: \(split)" }
        let responder = OFREPResponder(token: random.oneIn(3) ? Array("x".utf8) : nil)
        for (index, event) in whole.enumerated() {
            switch event {
            case .failure(let failure):
                guard index == whole.count - 1, (400..<600).contains(failure.status) else {
                    return "refusal \(failure) at \(index) of \(whole.count)"
                }
                if let problem = checkAnswer(OFREPResponder.refusal(failure)) { return problem }
            case .request(let request):
                guard request.body.count <= body else { return "a body of \(request.body.count) > \(body)" }
                let answer = responder.respond(to: request, flags: { flags }, admit: { random.oneIn(8) ? 2 : nil })
                if let problem = checkAnswer(answer) { return problem }
            default:
                return "unexpected \(event)"
            }
        }
        return nil
    }

    static func checkAnswer(_ answer: HTTPResponse) -> String? {
        let bytes = answer.serialized(closing: false)
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 \(answer.status) "), let end = text.range(of: "\r\n\r\n") else {
            return "malformed answer \(text)"
        }
        if answer.status == 304 { return answer.body.isEmpty ? nil : "a 304 with a body" }
        guard text[..<end.lowerBound].contains("Content-Length: \(answer.body.count)") else {
            return "the answer's length is not stated: \(text)"
        }
        guard (try? JSONValue(parsing: answer.body)) != nil else { return "the body is not JSON: \(text)" }
        return nil
    }

    @Test func theCorpusIsCheckedIn() {
        #expect(Self.corpus.count >= 20)
    }

    @Test func everySeedKeepsTheProperties() {
        for (index, input) in Self.corpus.enumerated() {
            var random = SeededGenerator(seed: UInt64(index))
            for _ in 0..<16 {
                let problem = Self.check(input, random: &random)
                #expect(problem == nil, "seed file \(index): \(problem ?? "")")
            }
        }
    }

    @Test func mutatedInputsKeepTheProperties() {
        let seed = Self.seed
        var mutator = FuzzMutator(seed: seed, corpus: Self.corpus)
        var random = SeededGenerator(seed: seed ^ 0xF00D)
        let clock = ContinuousClock()
        let deadline = clock.now + Self.duration
        var executions = 0
        // At least 1,000 inputs however slow the machine (a sanitizer build under load), more while time is left.
        while clock.now < deadline || executions <= 1000 {
            for _ in 0..<64 {
                var input = mutator.next()
                // Splice in what HTTP branches on, which the line protocol's mutator does not know.
                for _ in 0..<random.below(4) {
                    let token = Self.tokens[random.below(Self.tokens.count)]
                    input.insert(contentsOf: token, at: random.below(input.count + 1))
                }
                executions += 1
                if let problem = Self.check(input, random: &random) {
                    let path = NSTemporaryDirectory() + "pwflags-http-fuzz-failure-\(seed)-\(executions)"
                    _ = FileManager.default.createFile(atPath: path, contents: Data(input))
                    Issue.record("seed \(seed), execution \(executions) (input saved to \(path)): \(problem)")
                    return
                }
            }
        }
        print("http fuzz: \(executions) inputs, seed \(seed), corpus \(Self.corpus.count)")
    }
}

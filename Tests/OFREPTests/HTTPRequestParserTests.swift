import OFREP
import TestSupport
import Testing

/// The HTTP/1.1 subset: what it reads, what it refuses, and that it holds no more than its limits.
@Suite(.hangLimit) struct HTTPRequestParserTests {
    private func events(_ text: String, head: Int = 8192, body: Int = 65536) -> [HTTPRequestParser.Event] {
        var parser = HTTPRequestParser(maximumHeadBytes: head, maximumBodyBytes: body)
        parser.append(Array(text.utf8))
        var events: [HTTPRequestParser.Event] = []
        while true {
            let event = parser.next()
            events.append(event)
            switch event {
            case .incomplete, .failure: return events
            case .request, .continueExpected: continue
            }
        }
    }

    private func status(_ text: String, head: Int = 8192, body: Int = 65536) -> Int? {
        for case .failure(let failure) in events(text, head: head, body: body) { return failure.status }
        return nil
    }

    @Test func readsARequestWithItsHeadersAndBody() throws {
        let result = events(
            "POST /ofrep/v1/evaluate/flags?x=1 HTTP/1.1\r\nHost: a\r\nX-API-Key:  k \r\nContent-Length: 2\r\n\r\n{}")
        guard case .request(let request) = try #require(result.first) else {
            Issue.record("no request: \(result)")
            return
        }
        #expect(request.method == "POST")
        #expect(request.path == "/ofrep/v1/evaluate/flags")
        #expect(request.query == "x=1")
        #expect(request.header("x-api-key") == "k")
        #expect(request.body == Array("{}".utf8))
        #expect(request.keepsAlive)
        #expect(result.last == .incomplete)
    }

    @Test func pipelinedRequestsComeOutInOrder() {
        let one = "POST /a HTTP/1.1\r\nContent-Length: 1\r\n\r\n1"
        let two = "POST /b HTTP/1.1\r\nContent-Length: 1\r\n\r\n2"
        let paths = events(one + two).compactMap { event -> String? in
            if case .request(let request) = event {
                return request.path + String(decoding: request.body, as: UTF8.self)
            }
            return nil
        }
        #expect(paths == ["/a1", "/b2"])
    }

    @Test func aRequestSplitAtEveryByteReadsTheSame() {
        let text = Array("POST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc".utf8)
        var parser = HTTPRequestParser()
        var requests: [HTTPRequest] = []
        for byte in text {
            parser.append([byte])
            if case .request(let request) = parser.next() { requests.append(request) }
        }
        #expect(requests.map(\.body) == [Array("abc".utf8)])
    }

    @Test func bareLineFeedsAreTolerated() {
        #expect(status("POST /x HTTP/1.1\nContent-Length: 0\n\n") == nil)
    }

    @Test(arguments: [
        ("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
        ("POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
        ("POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
        ("POST /x HTTP/1.1\r\nContent-Length: 999999999999999999999\r\n\r\n", 413),
        ("POST /x HTTP/1.1\r\nContent-Length: 65537\r\n\r\n", 413),
        ("POST /x HTTP/1.1\r\nX: 1\r\n folded\r\n\r\n", 400),
        ("POST /x HTTP/1.1\r\nBad Name: 1\r\n\r\n", 400),
        ("POST /x HTTP/1.1\r\nExpect: something\r\n\r\n", 417),
        ("PRI * HTTP/2.0\r\n\r\n", 505),
        ("POST /x HTTP/9.9\r\n\r\n", 505),
        ("POST /x FTP/1.1\r\n\r\n", 400),
        ("POST  /x HTTP/1.1\r\n\r\n", 400),
        ("POST x HTTP/1.1\r\n\r\n", 400),
        ("\u{16}\u{03}\u{01} hello\r\n\r\n", 400),
    ])
    func refusesWhatTheSubsetDoesNotDo(text: String, expected: Int) {
        #expect(status(text) == expected)
    }

    @Test func aHeadOverTheLimitIs431EvenBeforeItEnds() {
        let text = "POST /x HTTP/1.1\r\nX-Long: " + String(repeating: "a", count: 300)
        #expect(status(text, head: 256) == 431)
    }

    @Test func aFailedParserStaysFailedAndHoldsNothing() {
        var parser = HTTPRequestParser()
        parser.append(Array("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
        #expect(
            parser.next()
                == .failure(HTTPFailure(501, "Transfer-Encoding is not supported; send the body with Content-Length")))
        parser.append(Array(repeating: 0x41, count: 100_000))
        #expect(parser.bufferedCount == 0)
        if case .failure = parser.next() {} else { Issue.record("the parser recovered") }
    }

    @Test func expectContinueIsAnnouncedOnceWhileTheBodyIsMissing() {
        var parser = HTTPRequestParser()
        parser.append(Array("POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n".utf8))
        #expect(parser.next() == .continueExpected)
        #expect(parser.next() == .incomplete)
        parser.append(Array("{}".utf8))
        if case .request(let request) = parser.next() {
            #expect(request.body == Array("{}".utf8))
        } else {
            Issue.record("no request after the body")
        }
    }

    @Test func http10ClosesUnlessAskedToKeepAlive() {
        let closing = HTTPRequest(method: "POST", path: "/", minorVersion: 0)
        let keeping = HTTPRequest(method: "POST", path: "/", minorVersion: 0, headers: [("connection", "Keep-Alive")])
        let closing11 = HTTPRequest(method: "POST", path: "/", headers: [("connection", "close")])
        #expect(!closing.keepsAlive)
        #expect(keeping.keepsAlive)
        #expect(!closing11.keepsAlive)
    }

    @Test func isIdleOnlyBetweenRequests() {
        var parser = HTTPRequestParser()
        #expect(parser.isIdle)
        parser.append(Array("PO".utf8))
        #expect(parser.next() == .incomplete)
        #expect(!parser.isIdle)
    }
}

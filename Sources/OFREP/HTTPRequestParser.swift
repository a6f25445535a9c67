/// The listener's HTTP/1.x request reader: bytes in, whole requests out, bounded.
///
/// The subset OFREP needs: a request line, header fields, and a body whose size `Content-Length` gives. It
/// refuses what it does not do rather than guess: `Transfer-Encoding` (chunked bodies) is 501, folded header
/// lines and malformed framing are 400, a head over `maximumHeadBytes` is 431, a body over `maximumBodyBytes`
/// is 413 before a byte of it is read, an `Expect` other than `100-continue` is 417, an HTTP version other than
/// 1.0 and 1.1 is 505. Requests that follow one another in the buffer (pipelining) come out one by one, in order.
/// After a failure the parser stays failed: the framing of anything that follows is unknown.
public struct HTTPRequestParser: Sendable {
    /// What the bytes so far hold.
    public enum Event: Sendable, Equatable {
        /// A whole request; call `next()` again for one that follows it.
        case request(HTTPRequest)
        /// The head of a request that waits for its body announced `Expect: 100-continue`: the caller sends
        /// `100 Continue` (once) and keeps reading.
        case continueExpected
        /// More bytes are needed.
        case incomplete
        /// The request is refused; answer with the failure's status and close.
        case failure(HTTPFailure)
    }

    private enum State: Sendable {
        case head
        case body(HTTPRequest, length: Int, continueSent: Bool)
        case failed(HTTPFailure)
    }

    public let maximumHeadBytes: Int
    public let maximumBodyBytes: Int
    /// Header fields per request.
    public static let maximumFields = 100

    private var buffer: [UInt8] = []
    private var state = State.head

    public init(maximumHeadBytes: Int = 8192, maximumBodyBytes: Int = 65536) {
        self.maximumHeadBytes = maximumHeadBytes
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// Adds bytes read from the connection.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if case .failed = state { return }
        buffer.append(contentsOf: bytes)
    }

    /// Bytes received and not yet part of a returned request.
    public var bufferedCount: Int { buffer.count }

    /// True when no byte of a next request has arrived: the connection is between requests.
    public var isIdle: Bool {
        if case .head = state { return buffer.isEmpty }
        return false
    }

    /// The next event from the bytes appended so far.
    public mutating func next() -> Event {
        switch state {
        case .failed(let failure):
            return .failure(failure)
        case .body(let request, let length, let continueSent):
            guard buffer.count >= length else {
                if !continueSent, request.header("expect") != nil {
                    state = .body(request, length: length, continueSent: true)
                    return .continueExpected
                }
                return .incomplete
            }
            var complete = request
            complete.body = Array(buffer[0..<length])
            buffer.removeFirst(length)
            state = .head
            return .request(complete)
        case .head:
            dropLeadingBlankLines()
            guard let end = headEnd() else {
                // The head, its empty line included, must fit in the limit, wherever the reads split it.
                if buffer.count >= maximumHeadBytes {
                    return fail(431, "the request head is over \(maximumHeadBytes) bytes")
                }
                return .incomplete
            }
            let head = Array(buffer[0..<end.headLength])
            buffer.removeFirst(end.bodyStart)
            switch Self.parseHead(head, maximumBodyBytes: maximumBodyBytes) {
            case .failure(let failure):
                state = .failed(failure)
                buffer = []
                return .failure(failure)
            case .success(let (request, length)):
                state = .body(request, length: length, continueSent: false)
                return next()
            }
        }
    }

    private mutating func fail(_ status: Int, _ reason: String) -> Event {
        let failure = HTTPFailure(status, reason)
        state = .failed(failure)
        buffer = []
        return .failure(failure)
    }

    /// RFC 9112 lets a server ignore empty lines before a request line (some clients send one after a body).
    private mutating func dropLeadingBlankLines() {
        var index = 0
        while index < buffer.count {
            if buffer[index] == 0x0A {
                index += 1
            } else if buffer[index] == 0x0D, index + 1 < buffer.count, buffer[index + 1] == 0x0A {
                index += 2
            } else {
                break
            }
        }
        if index > 0 { buffer.removeFirst(index) }
    }

    /// Where the head's empty line ends (CRLF CRLF, or bare LF as RFC 9112 tolerates) within the first
    /// `maximumHeadBytes`; nil when it is not there.
    private func headEnd() -> (headLength: Int, bodyStart: Int)? {
        let limit = min(buffer.count, maximumHeadBytes)
        var index = 0
        while index < limit {
            if buffer[index] == 0x0A {
                if index + 1 < limit, buffer[index + 1] == 0x0A { return (index, index + 2) }
                if index + 2 < limit, buffer[index + 1] == 0x0D, buffer[index + 2] == 0x0A {
                    return (index, index + 3)
                }
            }
            index += 1
        }
        return nil
    }
}

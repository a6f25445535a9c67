import CCurl

/// How one HTTP exchange ended, before the reply body is interpreted.
enum ExchangeOutcome: Sendable {
    /// HTTP 200 with its complete body, at most the byte limit.
    case ok([UInt8])
    /// Anything else, already classified by R11 status and kind.
    case failure(PushwooshError)
}

/// One POST over a ``CurlChannel``, run to its end on the calling thread (never a thread of the cooperative
/// pool): the request set up on the easy handle, the reply read into memory with its bounds, the outcome
/// classified by R11 status and ``PushwooshError/Kind``.
///
/// Only the exchange's own thread touches it; libcurl calls its callbacks from inside `curl_multi_perform`.
final class CurlExchange {
    struct Request {
        var url: String
        var headers: [String]
        var body: [UInt8]
        var timeout: Duration
        var caFile: String?
        var connectTo: [String]
    }

    private let channel: CurlChannel
    private let limit: Int
    private let cancellation: CurlCancellation
    private var body: [UInt8] = []
    private var status = 0
    private var sawFirstBytes = false
    private var tooLarge = false
    private var errorText = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

    init(channel: CurlChannel, limit: Int, cancellation: CurlCancellation) {
        self.channel = channel
        self.limit = limit
        self.cancellation = cancellation
    }

    /// Performs `request`; returns when the reply is complete, a bound is reached, or the exchange is cancelled.
    func perform(_ request: Request) -> ExchangeOutcome {
        let easy = channel.easy
        pwflags_curl_easy_reset(easy)
        var lists: [UnsafeMutablePointer<curl_slist>?] = []
        defer { for list in lists { pwflags_curl_slist_free_all(list) } }
        let result: CURLcode = errorText.withUnsafeMutableBufferPointer { errorBuffer in
            let headers = Self.list(request.headers + ["Expect:"])
            let connectTo = Self.list(request.connectTo)
            lists = [headers, connectTo]
            guard configure(request, headers: headers, connectTo: connectTo, errorBuffer: errorBuffer.baseAddress)
            else { return CURLE_FAILED_INIT }
            return withExtendedLifetime(self) { run() }
        }
        return outcome(of: result, timeout: request.timeout)
    }

    private func configure(
        _ request: Request, headers: UnsafeMutablePointer<curl_slist>?, connectTo: UnsafeMutablePointer<curl_slist>?,
        errorBuffer: UnsafeMutablePointer<CChar>?
    ) -> Bool {
        let easy = channel.easy
        let (seconds, attoseconds) = request.timeout.components
        let milliseconds = max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        var codes: [CURLcode] = [
            pwflags_curl_set_string(easy, CURLOPT_URL, request.url),
            // Only the two schemes R16 accepts; never a redirect, whose target could take the token elsewhere.
            pwflags_curl_set_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"),
            pwflags_curl_set_long(easy, CURLOPT_FOLLOWLOCATION, 0),
            // Threads and signals do not mix: no SIGALRM for DNS timeouts.
            pwflags_curl_set_long(easy, CURLOPT_NOSIGNAL, 1),
            // The bound on the whole exchange, from DNS to the last byte.
            pwflags_curl_set_long(easy, CURLOPT_TIMEOUT_MS, Int(milliseconds)),
            pwflags_curl_set_long(easy, CURLOPT_SSL_VERIFYPEER, 1),
            pwflags_curl_set_long(easy, CURLOPT_SSL_VERIFYHOST, 2),
            pwflags_curl_set_list(easy, CURLOPT_HTTPHEADER, headers),
            pwflags_curl_set_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer),
            pwflags_curl_set_long(easy, CURLOPT_POST, 1),
            pwflags_curl_set_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)),
            request.body.withUnsafeBytes { bytes in
                pwflags_curl_set_pointer(
                    easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            },
            pwflags_curl_set_data_callback(easy, CURLOPT_WRITEFUNCTION, curlWrite),
            pwflags_curl_set_pointer(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque()),
        ]
        if let caFile = request.caFile { codes.append(pwflags_curl_set_string(easy, CURLOPT_CAINFO, caFile)) }
        if connectTo != nil { codes.append(pwflags_curl_set_list(easy, CURLOPT_CONNECT_TO, connectTo)) }
        return codes.allSatisfy { $0 == CURLE_OK }
    }

    /// Drives the transfer until it ends or the exchange is cancelled.
    private func run() -> CURLcode {
        let multi = channel.multi
        guard pwflags_curl_multi_add_handle(multi, channel.easy) == CURLM_OK else { return CURLE_FAILED_INIT }
        defer { pwflags_curl_multi_remove_handle(multi, channel.easy) }
        var result = CURLE_OK
        while true {
            if cancellation.isCancelled { return CURLE_ABORTED_BY_CALLBACK }
            var running: Int32 = 0
            guard pwflags_curl_multi_perform(multi, &running) == CURLM_OK else { return CURLE_FAILED_INIT }
            if pwflags_curl_multi_done(multi, &result) != 0 || running == 0 { return result }
            // libcurl shortens the wait to its own next timeout; a cancellation wakes it at once.
            _ = pwflags_curl_multi_poll(multi, 1000)
        }
    }

    /// Takes a piece of the body: all of it for HTTP 200 up to the limit, the first bytes of any other reply.
    fileprivate func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
        if !sawFirstBytes {
            sawFirstBytes = true
            var code = 0
            _ = pwflags_curl_get_long(channel.easy, CURLINFO_RESPONSE_CODE, &code)
            status = code
            var announced: curl_off_t = -1
            _ = pwflags_curl_get_offset(channel.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced)
            // A body announced over the limit is never read.
            if status == 200 && announced > limit {
                tooLarge = true
                return 0
            }
        }
        if status == 200 {
            guard body.count + bytes.count <= limit else {
                tooLarge = true
                body = []
                return 0
            }
            body.append(contentsOf: bytes)
            return bytes.count
        }
        // A failed reply: keep its first bytes, then stop reading.
        let room = PushwooshError.failureBodyLimit - body.count
        body.append(contentsOf: bytes.prefix(room))
        return bytes.count <= room ? bytes.count : 0
    }

    private func outcome(of result: CURLcode, timeout: Duration) -> ExchangeOutcome {
        if cancellation.isCancelled { return .failure(.noReply("cancelled", kind: .cancelled)) }
        if tooLarge { return .failure(.unusable("reply over \(limit / (1024 * 1024)) MiB", kind: .tooLarge)) }
        var code = 0
        _ = pwflags_curl_get_long(channel.easy, CURLINFO_RESPONSE_CODE, &code)
        if code != 0 && code != 200 {
            let retryAfter = pwflags_curl_header(channel.easy, "Retry-After").map { String(cString: $0) }
            return .failure(.httpStatus(code, retryAfter: retryAfter, body: body))
        }
        guard result == CURLE_OK else {
            let kind = Self.kind(of: result)
            let detail = String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let general = String(cString: pwflags_curl_easy_strerror(result))
            let text = kind == .timeout ? "timed out after \(timeout)" : detail.isEmpty ? general : detail
            return .failure(.noReply("\(text) (curl error \(result.rawValue))", kind: kind))
        }
        guard code == 200 else { return .failure(.noReply("no HTTP response")) }
        return .ok(body)
    }

    /// libcurl's result as the kind an operator reads.
    static func kind(of result: CURLcode) -> PushwooshError.Kind {
        switch result {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .dns
        case CURLE_COULDNT_CONNECT: .connect
        case CURLE_OPERATION_TIMEDOUT: .timeout
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_USE_SSL_FAILED, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED:
            .tls
        case CURLE_FILESIZE_EXCEEDED: .tooLarge
        case CURLE_ABORTED_BY_CALLBACK: .cancelled
        default: .network
        }
    }

    private static func list(_ lines: [String]) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines { list = pwflags_curl_slist_append(list, line) }
        return list
    }
}

/// libcurl's write callback: hands the bytes to the exchange whose pointer is `context`.
private func curlWrite(
    data: UnsafeMutablePointer<CChar>?, size: Int, count: Int, context: UnsafeMutableRawPointer?
) -> Int {
    guard let context else { return 0 }
    let exchange = Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue()
    return exchange.receive(UnsafeRawBufferPointer(start: data, count: size * count))
}

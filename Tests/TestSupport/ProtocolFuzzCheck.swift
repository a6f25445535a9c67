import FlagsCore
import FlagsProtocol

/// The properties every input to the protocol code must keep, whatever its bytes; shared by the fuzz test and
/// the `pwflags-fuzz` libFuzzer harness.
///
/// - `Framer` of lines, fed the input in pieces of any size, returns the lines a simple reference split returns and
///   stops at the first line over the limit.
/// - JSON that parses serializes to one line that parses back to the same value and the same bytes.
/// - `Request.decode` and `Call` never trap; a decoded request encodes to a line that decodes to itself.
/// - When `FastRequest` answers, the general path answers the same call and the same id bytes (for a Varlink
///   `Get` too).
/// - Every error the daemon would write for the line is one line of JSON that a client reads back.
public enum ProtocolFuzzCheck {
    /// What the framer returns, in order; ends at the first `.tooLong`.
    enum Frame: Equatable {
        case line([UInt8])
        case tooLong
    }

    /// The line limits inputs are framed with: tiny ones make the over-long path as common as the normal one.
    static let limits = [1, 8, 40, 256, 65536]

    /// Checks `input`; returns what went wrong, or nil. `random` picks the line limit and the read sizes.
    public static func check(_ input: [UInt8], random: inout SeededGenerator) -> String? {
        let limit = limits[random.below(limits.count)]
        let framed = frame(input, limit: limit, random: &random)
        let expected = referenceFrames(input, limit: limit)
        guard framed == expected else {
            return "Framer(limit \(limit)) gave \(framed), the reference split \(expected)"
        }
        for case .line(let line) in framed {
            if let problem = checkLine(ArraySlice(line)) { return problem }
        }
        // The whole input as one line too: raw newlines are JSON whitespace, so this reaches the parser's
        // multi-line paths that the framer never hands it.
        return checkLine(ArraySlice(input))
    }

    /// Feeds `input` to a framer in random pieces and collects what it returns.
    static func frame(_ input: [UInt8], limit: Int, random: inout SeededGenerator) -> [Frame] {
        var framer = Framer(.newline, maximumBytes: limit)
        var frames: [Frame] = []
        var offset = 0
        while offset < input.count {
            let size = random.oneIn(4) ? input.count - offset : 1 + random.below(min(64, input.count - offset))
            framer.append(input[offset..<offset + size])
            offset += size
            reading: while true {
                switch framer.next() {
                case .message(let line): frames.append(.line(Array(line)))
                case .needMore: break reading
                case .tooLong:
                    frames.append(.tooLong)
                    return frames
                }
            }
        }
        return frames
    }

    /// The framing of docs/protocol.md, written the slow and obvious way.
    static func referenceFrames(_ input: [UInt8], limit: Int) -> [Frame] {
        var frames: [Frame] = []
        var start = 0
        for (index, byte) in input.enumerated() where byte == UInt8(ascii: "\n") {
            var line = Array(input[start..<index])
            start = index + 1
            guard line.count <= limit else { return frames + [.tooLong] }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { continue }
            frames.append(.line(line))
        }
        if input.count - start > limit { frames.append(.tooLong) }
        return frames
    }

    /// Checks one line the way the daemon's request path and a client's response path read it.
    public static func checkLine(_ line: ArraySlice<UInt8>) -> String? {
        if let problem = checkJSONRoundTrip(Array(line)) { return problem }
        _ = IncomingMessage(line: line)
        var general: (request: Request, call: Call)?
        switch Request.decode(line) {
        case .failure(let failure):
            if let id = failure.id, let problem = checkErrorLine(id: id, error: failure.error) { return problem }
        case .success(let request):
            let encoded = request.encoded()
            guard encoded.last == UInt8(ascii: "\n"), !encoded.dropLast().contains(UInt8(ascii: "\n")),
                Request.decode(encoded.dropLast()) == .success(request)
            else { return "request \(request) does not survive encoding: \(text(encoded))" }
            do {
                let call = try Call(method: request.method, params: request.params)
                guard (try? Call(method: call.method, params: call.params)) == call else {
                    return "call \(call) does not survive its own method and params"
                }
                general = (request, call)
            } catch {
                if let problem = checkErrorLine(id: request.id ?? .null, error: error) { return problem }
            }
        }
        if let problem = checkVarlinkGet(line) { return problem }
        guard let fast = FastRequest.scan(line) else { return nil }
        guard let general else { return "FastRequest answered \(fast) where the general path refused" }
        let id: ArraySlice<UInt8>
        let call: Call
        switch fast {
        case .get(let fastID, let key):
            (id, call) = (fastID, .get(key: key))
        case .isEnabled(let fastID, let key, let fallback):
            (id, call) = (fastID, .isEnabled(key: key, default: fallback))
        case .getAll(let fastID):
            (id, call) = (fastID, .getAll)
        }
        guard call == general.call else { return "FastRequest read \(call), the general path \(general.call)" }
        // Both paths echo the id's text as the request sent it.
        let generalID = RequestID(echoing: general.request.id, in: line).map { Array($0.text) } ?? []
        guard Array(id) == generalID else {
            return "FastRequest echoes id \(text(Array(id))), the general path \(text(generalID))"
        }
        return nil
    }

    /// When `FastRequest.varlinkGetKey` reads a key, the general Varlink path reads the same `Get` call.
    static func checkVarlinkGet(_ message: ArraySlice<UInt8>) -> String? {
        guard let key = FastRequest.varlinkGetKey(message) else { return nil }
        guard case .success(let call) = VarlinkCall.decode(message) else {
            return "the Varlink fast path read Get \(key) where VarlinkCall.decode refused"
        }
        guard call.method == "io.github.pwflagsd.Flags.Get", !call.more, !call.oneway, !call.upgrade,
            (try? Call(method: "get", params: call.parameters)) == .get(key: key)
        else { return "the Varlink fast path read Get \(key), the general path \(call)" }
        return nil
    }

    /// Parsed JSON prints as one line that parses back to the same value and prints the same bytes again.
    static func checkJSONRoundTrip(_ bytes: [UInt8]) -> String? {
        guard let value = try? JSONValue(parsing: bytes) else { return nil }
        var printed: [UInt8] = []
        value.write(to: &printed)
        guard !printed.contains(UInt8(ascii: "\n")) else { return "a raw newline in printed JSON \(text(printed))" }
        guard let again = try? JSONValue(parsing: printed) else {
            return "printed JSON does not parse: \(text(printed))"
        }
        guard again == value else { return "JSON round trip changed the value: \(text(printed))" }
        var reprinted: [UInt8] = []
        again.write(to: &reprinted)
        guard reprinted == printed else { return "JSON prints differently the second time: \(text(printed))" }
        return nil
    }

    /// The error line the daemon writes is one line of JSON a client reads back with the same id and code.
    static func checkErrorLine(id: JSONValue, error: RPCError) -> String? {
        var output: [UInt8] = []
        Message.writeError(id: id, error: error, to: &output)
        guard output.last == UInt8(ascii: "\n"), !output.dropLast().contains(UInt8(ascii: "\n")) else {
            return "error response is not one line: \(text(output))"
        }
        guard case .response(let readID, .failure(let read))? = IncomingMessage(line: output.dropLast()),
            readID == id, read.code == error.code
        else { return "error response does not read back: \(text(output))" }
        return nil
    }

    private static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription
    }
}

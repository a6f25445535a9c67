/// Why a text is not JSON, with the byte offset where the parser gave up.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var offset: Int

    public init(_ reason: String, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "\(reason) at byte \(offset)" }
}

extension JSONValue {
    /// The deepest nesting accepted; hostile input must not exhaust the stack.
    public static let maximumDepth = 256

    /// Parses one JSON text (RFC 8259): a single value with optional surrounding whitespace, valid UTF-8.
    public init(parsing text: String) throws(JSONParseError) {
        try self.init(parsing: Array(text.utf8))
    }

    /// Parses one JSON text from UTF-8 bytes.
    public init(parsing bytes: [UInt8]) throws(JSONParseError) {
        let result = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONParseError) in try JSONValue(parsing: buffer) }
        }
        self = try result.get()
    }

    /// Parses one JSON text from a buffer of UTF-8 bytes.
    public init(parsing buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) {
        var parser = JSONParser(bytes: buffer)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.isAtEnd else { throw JSONParseError("unexpected text after the value", at: parser.index) }
        self = value
    }
}

/// A recursive-descent parser over a byte buffer; internal so that its one entry point is `JSONValue(parsing:)`.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { index >= bytes.count }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw JSONParseError("unexpected end of input", at: index) }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["):
            return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            throw JSONParseError("unexpected character", at: index)
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw JSONParseError("unexpected end of input", at: index) }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
            throw JSONParseError("invalid literal", at: index)
        }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        // Room for a flag object's members from the start: growing the table member by member rehashed it.
        var members = [String: JSONValue](minimumCapacity: 6)
        if try opensEmptyContainer(closer: "}", depth: depth) { return .object([:]) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw JSONParseError("expected a member name", at: index)
            }
            let name = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw JSONParseError("expected ':'", at: index)
            }
            index += 1
            skipWhitespace()
            members[name] = try parseValue(depth: depth)
            if try closesContainer(closer: "}") { return .object(members) }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        var elements: [JSONValue] = []
        if try opensEmptyContainer(closer: "]", depth: depth) { return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            if try closesContainer(closer: "]") { return .array(elements) }
        }
    }

    /// Steps over an object's or array's opening byte; true when `closer` follows at once (consumed: it is empty).
    private mutating func opensEmptyContainer(closer: Unicode.Scalar, depth: Int) throws(JSONParseError) -> Bool {
        guard depth <= JSONValue.maximumDepth else { throw JSONParseError("nesting too deep", at: index) }
        index += 1
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: closer) else { return false }
        index += 1
        return true
    }

    /// After a member or element: false at a ',' (another follows), true at `closer`; either is consumed.
    private mutating func closesContainer(closer: Unicode.Scalar) throws(JSONParseError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw JSONParseError("unexpected end of input", at: index) }
        if bytes[index] == UInt8(ascii: ",") {
            index += 1
            return false
        }
        guard bytes[index] == UInt8(ascii: closer) else {
            throw JSONParseError("expected ',' or '\(closer)'", at: index)
        }
        index += 1
        return true
    }

    /// Parses a string starting at its opening quote; validates UTF-8 and every escape.
    mutating func parseString() throws(JSONParseError) -> String {
        let start = index
        index += 1
        let contentStart = index
        // Fast path: no escapes, so the bytes between the quotes are the string.
        var bits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[contentStart..<index])
                index += 1
                // ASCII is valid UTF-8: decoding it is a copy. `String(validating:)` goes through a generic path
                // that looked up type metadata for every string, a tenth of reading a cache of 10,000 flags.
                if bits < 0x80 { return String(decoding: slice, as: UTF8.self) }
                guard let string = String(validating: slice, as: UTF8.self) else {
                    throw JSONParseError("invalid UTF-8 in a string", at: start)
                }
                return string
            }
            bits |= byte
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw JSONParseError("control character in a string", at: index) }
            index += 1
        }
        var scalars: [UInt8] = Array(UnsafeBufferPointer(rebasing: bytes[contentStart..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: scalars, as: UTF8.self) else {
                    throw JSONParseError("invalid UTF-8 in a string", at: start)
                }
                return string
            case UInt8(ascii: "\\"):
                try parseEscape(into: &scalars)
            case 0..<0x20:
                throw JSONParseError("control character in a string", at: index)
            default:
                scalars.append(byte)
                index += 1
            }
        }
        throw JSONParseError("unterminated string", at: start)
    }

    private mutating func parseEscape(into output: inout [UInt8]) throws(JSONParseError) {
        let escapeStart = index
        index += 1
        guard index < bytes.count else { throw JSONParseError("unterminated string", at: escapeStart) }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): output.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): output.append(0x08)
        case UInt8(ascii: "f"): output.append(0x0C)
        case UInt8(ascii: "n"): output.append(0x0A)
        case UInt8(ascii: "r"): output.append(0x0D)
        case UInt8(ascii: "t"): output.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xD800..<0xDC00).contains(scalar) {
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u")
                else { throw JSONParseError("unpaired surrogate", at: escapeStart) }
                index += 2
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else {
                    throw JSONParseError("unpaired surrogate", at: escapeStart)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw JSONParseError("unpaired surrogate", at: escapeStart)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw JSONParseError("invalid escape", at: escapeStart) }
            output.append(contentsOf: String(Character(unicode)).utf8)
        default:
            throw JSONParseError("invalid escape", at: escapeStart)
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw JSONParseError("invalid \\u escape", at: index) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONParseError("invalid \\u escape", at: index)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONParseError) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw JSONParseError("invalid number", at: start) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            guard skipDigits() > 0 else { throw JSONParseError("invalid number", at: start) }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard skipDigits() > 0 else { throw JSONParseError("invalid number", at: start) }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard skipDigits() > 0 else { throw JSONParseError("invalid number", at: start) }
        }
        let literal = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(literal), value.isFinite else {
            throw JSONParseError("number out of range", at: start)
        }
        // A number too small to hold is out of range as one too large is, not silently zero.
        if value == 0,
            literal.utf8.prefix(while: { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }).contains(where: {
                $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9")
            })
        {
            throw JSONParseError("number out of range", at: start)
        }
        return value
    }

    private mutating func skipDigits() -> Int {
        let start = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        return index - start
    }
}

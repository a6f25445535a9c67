#if canImport(Glibc)
    import Glibc
#endif

/// The common read requests (`get`, `isEnabled`, `getAll`) recognised straight from their bytes, without
/// building a JSON tree.
///
/// It accepts only the plain shapes clients send (no escapes in strings, an integer or plain ASCII string id,
/// no unknown members, no duplicates) and returns nil for anything else, which then takes the general path
/// (`Request.decode` and `Call`). So it can never answer differently from the general path, only faster; a
/// test holds the two to the same answers.
public enum FastRequest: Equatable, Sendable {
    /// `id` is the id's JSON text, echoed as it came.
    case get(id: ArraySlice<UInt8>, key: String)
    case isEnabled(id: ArraySlice<UInt8>, key: String, default: Bool)
    case getAll(id: ArraySlice<UInt8>)

    /// The request in `line`, or nil when it is not one of the plain shapes.
    public static func scan(_ line: ArraySlice<UInt8>) -> FastRequest? {
        // Scanning raw memory instead of the slice drops bounds checks and generic dispatch from every byte.
        line.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer)
            guard let scanned = scanner.request() else { return nil }
            let base = line.startIndex
            func id(_ range: Range<Int>) -> ArraySlice<UInt8> {
                line[(base + range.lowerBound)..<(base + range.upperBound)]
            }
            switch scanned {
            case .get(let range, let key): return .get(id: id(range), key: key)
            case .isEnabled(let range, let key, let fallback):
                return .isEnabled(id: id(range), key: key, default: fallback)
            case .getAll(let range): return .getAll(id: id(range))
            }
        }
    }

    /// The key of a Varlink `io.github.pwflagsd.Flags.Get` call in its plain shape
    /// (`{"method":"io.github.pwflagsd.Flags.Get","parameters":{"key":"…"}}`, members in any order, no `more`,
    /// `oneway` or other member), or nil: the call then takes the general path (`VarlinkCall.decode` and `Call`),
    /// which answers it the same way.
    public static func varlinkGetKey(_ message: ArraySlice<UInt8>) -> String? {
        message.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer)
            return scanner.varlinkGet()
        }
    }

    /// What the scanner found, with the id as a range of the line.
    private enum Scanned {
        case get(Range<Int>, String)
        case isEnabled(Range<Int>, String, Bool)
        case getAll(Range<Int>)
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        mutating func request() -> Scanned? {
            var id: Range<Int>?
            var method: Slice<UnsafeBufferPointer<UInt8>>?
            var key: String?
            var defaultValue: Bool?
            var sawVersion = false
            var sawParams = false
            skipSpace()
            guard consume(UInt8(ascii: "{")) else { return nil }
            skipSpace()
            if !consume(UInt8(ascii: "}")) {
                repeat {
                    skipSpace()
                    guard let name = plainString(), consumeColon() else { return nil }
                    switch name.count {
                    case 2 where Self.equals(name, "id"):
                        guard id == nil, let value = idValue() else { return nil }
                        id = value
                    case 6 where Self.equals(name, "method"):
                        guard method == nil, let value = plainString() else { return nil }
                        method = value
                    case 7 where Self.equals(name, "jsonrpc"):
                        guard !sawVersion, let value = plainString(), Self.equals(value, "2.0") else { return nil }
                        sawVersion = true
                    case 6 where Self.equals(name, "params"):
                        guard !sawParams, params(key: &key, default: &defaultValue) else { return nil }
                        sawParams = true
                    default:
                        return nil
                    }
                    skipSpace()
                } while consume(UInt8(ascii: ","))
                guard consume(UInt8(ascii: "}")) else { return nil }
            }
            skipSpace()
            guard index == bytes.endIndex, let id, let method else { return nil }
            if Self.equals(method, "get") {
                guard let key, defaultValue == nil else { return nil }
                return .get(id, key)
            }
            if Self.equals(method, "isEnabled") {
                guard let key else { return nil }
                return .isEnabled(id, key, defaultValue ?? false)
            }
            if Self.equals(method, "getAll") {
                guard key == nil, defaultValue == nil else { return nil }
                return .getAll(id)
            }
            return nil
        }

        mutating func varlinkGet() -> String? {
            var method: Slice<UnsafeBufferPointer<UInt8>>?
            var key: String?
            var sawParameters = false
            skipSpace()
            guard consume(UInt8(ascii: "{")) else { return nil }
            repeat {
                skipSpace()
                guard let name = plainString(), consumeColon() else { return nil }
                if Self.equals(name, "method") {
                    guard method == nil, let value = plainString() else { return nil }
                    method = value
                } else if Self.equals(name, "parameters") {
                    var defaultValue: Bool?
                    guard !sawParameters, params(key: &key, default: &defaultValue), defaultValue == nil else {
                        return nil
                    }
                    sawParameters = true
                } else {
                    return nil
                }
                skipSpace()
            } while consume(UInt8(ascii: ","))
            guard consume(UInt8(ascii: "}")) else { return nil }
            skipSpace()
            guard index == bytes.endIndex, let method, Self.equals(method, "io.github.pwflagsd.Flags.Get") else {
                return nil
            }
            return key
        }

        /// `{"key":"…","default":true}` with either member optional.
        private mutating func params(key: inout String?, default defaultValue: inout Bool?) -> Bool {
            guard consume(UInt8(ascii: "{")) else { return false }
            skipSpace()
            if consume(UInt8(ascii: "}")) { return true }
            repeat {
                skipSpace()
                guard let name = plainString(), consumeColon() else { return false }
                if Self.equals(name, "key") {
                    guard key == nil, let value = plainString(), let text = Self.text(of: value) else { return false }
                    key = text
                } else if Self.equals(name, "default") {
                    guard defaultValue == nil else { return false }
                    if consumeWord("true") {
                        defaultValue = true
                    } else if consumeWord("false") {
                        defaultValue = false
                    } else {
                        return false
                    }
                } else {
                    return false
                }
                skipSpace()
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "}"))
        }

        /// An integer of at most 15 digits, or a string of printable ASCII without escapes; returns its range.
        private mutating func idValue() -> Range<Int>? {
            let start = index
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "\"") {
                guard let content = plainString(), content.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
                return start..<index
            }
            let negative = index < bytes.endIndex && bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            let digitsStart = index
            while index < bytes.endIndex, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            let digits = index - digitsStart
            // The line may end right after the colon or the minus sign: look at a digit only when there is one.
            let leadingZero = digits > 0 && bytes[digitsStart] == UInt8(ascii: "0")
            // "-0" and leading zeros are left to the general path.
            guard digits > 0, digits <= 15, !leadingZero || (digits == 1 && !negative) else { return nil }
            // A fraction or an exponent goes to the general path, which prints numbers its own way.
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: ".") || bytes[index] | 0x20 == UInt8(ascii: "e") {
                return nil
            }
            return start..<index
        }

        /// The string `slice` holds, nil when it is not UTF-8. Keys are ASCII as a rule, and an ASCII run needs no
        /// decoding: it skips the generic validation, whose metadata lookups were a tenth of a `get`'s own time.
        private static func text(of slice: Slice<UnsafeBufferPointer<UInt8>>) -> String? {
            let bytes = UnsafeBufferPointer(rebasing: slice)
            if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
            return String(validating: bytes, as: UTF8.self)
        }

        /// True when `slice` holds exactly the bytes of `literal`.
        private static func equals(_ slice: Slice<UnsafeBufferPointer<UInt8>>, _ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard slice.count == count, let base = slice.base.baseAddress else { return false }
            return memcmp(base + slice.startIndex, literal.utf8Start, count) == 0
        }

        /// A string without escapes or control characters; returns its content.
        private mutating func plainString() -> Slice<UnsafeBufferPointer<UInt8>>? {
            guard consume(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.endIndex {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let content = bytes[start..<index]
                    index += 1
                    return content
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                index += 1
            }
            return nil
        }

        private mutating func consumeColon() -> Bool {
            skipSpace()
            guard consume(UInt8(ascii: ":")) else { return false }
            skipSpace()
            return true
        }

        private mutating func consumeWord(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.endIndex - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        private mutating func consume(_ byte: UInt8) -> Bool {
            guard index < bytes.endIndex, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func skipSpace() {
            while index < bytes.endIndex {
                switch bytes[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): index += 1
                default: return
                }
            }
        }
    }
}

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
        var scanner = Scanner(bytes: line)
        return scanner.request()
    }

    private struct Scanner {
        let bytes: ArraySlice<UInt8>
        var index: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            self.index = bytes.startIndex
        }

        mutating func request() -> FastRequest? {
            var id: ArraySlice<UInt8>?
            var method: ArraySlice<UInt8>?
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
                    case 2 where name.elementsEqual("id".utf8):
                        guard id == nil, let value = idValue() else { return nil }
                        id = value
                    case 6 where name.elementsEqual("method".utf8):
                        guard method == nil, let value = plainString() else { return nil }
                        method = value
                    case 7 where name.elementsEqual("jsonrpc".utf8):
                        guard !sawVersion, let value = plainString(), value.elementsEqual("2.0".utf8) else {
                            return nil
                        }
                        sawVersion = true
                    case 6 where name.elementsEqual("params".utf8):
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
            if method.elementsEqual("get".utf8) {
                guard let key, defaultValue == nil else { return nil }
                return .get(id: id, key: key)
            }
            if method.elementsEqual("isEnabled".utf8) {
                guard let key else { return nil }
                return .isEnabled(id: id, key: key, default: defaultValue ?? false)
            }
            if method.elementsEqual("getAll".utf8) {
                guard key == nil, defaultValue == nil else { return nil }
                return .getAll(id: id)
            }
            return nil
        }

        /// `{"key":"…","default":true}` with either member optional.
        private mutating func params(key: inout String?, default defaultValue: inout Bool?) -> Bool {
            guard consume(UInt8(ascii: "{")) else { return false }
            skipSpace()
            if consume(UInt8(ascii: "}")) { return true }
            repeat {
                skipSpace()
                guard let name = plainString(), consumeColon() else { return false }
                if name.elementsEqual("key".utf8) {
                    guard key == nil, let value = plainString(), let text = String(validating: value, as: UTF8.self)
                    else { return false }
                    key = text
                } else if name.elementsEqual("default".utf8) {
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

        /// An integer of at most 15 digits, or a string of printable ASCII without escapes.
        private mutating func idValue() -> ArraySlice<UInt8>? {
            let start = index
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "\"") {
                guard let content = plainString(), content.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
                return bytes[start..<index]
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
            return bytes[start..<index]
        }

        /// A string without escapes or control characters; returns its content.
        private mutating func plainString() -> ArraySlice<UInt8>? {
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

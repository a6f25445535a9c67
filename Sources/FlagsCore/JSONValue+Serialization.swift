extension JSONValue {
    /// The compact JSON text: no whitespace, object members sorted by name, never a raw newline.
    public func serialized() -> String {
        var output: [UInt8] = []
        write(to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends the compact JSON text to `output`.
    public func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let value): JSONValue.writeNumber(value, to: &output)
        case .string(let value): JSONValue.writeString(value, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            // The members' positions sorted by name: each member is then read at its position, not looked up
            // (hashed) again by name.
            let order = members.indices.sorted { members[$0].key < members[$1].key }
            for (position, index) in order.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                let (name, value) = members[index]
                JSONValue.writeString(name, to: &output)
                output.append(UInt8(ascii: ":"))
                value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Writes a number: integers without a fraction, everything else in Swift's shortest round-tripping form.
    public static func writeNumber(_ value: Double, to output: inout [UInt8]) {
        guard value.isFinite else {
            // JSON has no infinities; the parser never produces one, so this only guards programming errors.
            output.append(contentsOf: "null".utf8)
            return
        }
        if abs(value) < 1e15, let integer = Int64(exactly: value) {
            output.append(contentsOf: String(integer).utf8)
        } else {
            output.append(contentsOf: value.description.utf8)
        }
    }

    /// Writes a quoted, escaped JSON string.
    public static func writeString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Most strings need no escape: appended whole, not byte by byte.
        var text = value
        let plain = text.withUTF8 { bytes in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                return false
            }
            output.append(contentsOf: bytes)
            return true
        }
        guard !plain else {
            output.append(UInt8(ascii: "\""))
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0xF)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

/// Writes protocol buffers' wire format: the few field kinds OTLP's messages use, nothing more.
///
/// A nested message is written into a writer of its own and then added as a length-delimited field, so the
/// encoder never needs to know a size ahead. Fields at their default value are left out by the callers, as
/// protobuf's own encoders do for proto3.
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    private enum WireType: UInt64 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
    }

    private mutating func tag(_ field: UInt64, _ type: WireType) {
        varint(field << 3 | type.rawValue)
    }

    private mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    private mutating func little64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func uint(_ field: UInt64, _ value: UInt64) {
        tag(field, .varint)
        varint(value)
    }

    /// An `int64` field: negative numbers take ten bytes, as protobuf's two's complement varint does.
    mutating func int(_ field: UInt64, _ value: Int64) {
        uint(field, UInt64(bitPattern: value))
    }

    mutating func bool(_ field: UInt64, _ value: Bool) {
        uint(field, value ? 1 : 0)
    }

    mutating func fixed64(_ field: UInt64, _ value: UInt64) {
        tag(field, .fixed64)
        little64(value)
    }

    mutating func double(_ field: UInt64, _ value: Double) {
        fixed64(field, value.bitPattern)
    }

    mutating func string(_ field: UInt64, _ value: String) {
        bytes(field, Array(value.utf8))
    }

    mutating func bytes(_ field: UInt64, _ value: [UInt8]) {
        tag(field, .lengthDelimited)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// A nested message, written by `body` into a writer of its own.
    mutating func message(_ field: UInt64, _ body: (inout ProtobufWriter) -> Void) {
        var nested = ProtobufWriter()
        body(&nested)
        bytes(field, nested.bytes)
    }

    /// A packed repeated `fixed64` field.
    mutating func packedFixed64(_ field: UInt64, _ values: [UInt64]) {
        var packed = ProtobufWriter()
        for value in values { packed.little64(value) }
        bytes(field, packed.bytes)
    }

    /// A packed repeated `double` field.
    mutating func packedDouble(_ field: UInt64, _ values: [Double]) {
        packedFixed64(field, values.map(\.bitPattern))
    }
}

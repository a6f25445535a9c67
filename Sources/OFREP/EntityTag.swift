/// An HTTP entity tag (`ETag`) and the `If-None-Match` test against it.
public struct EntityTag: Sendable, Equatable, CustomStringConvertible {
    /// The quoted form sent in `ETag`, such as `"9f86d081884c7d65"`.
    public let quoted: String

    /// The tag of a body: its 64-bit FNV-1a digest and its length. Not a security measure; it only has to
    /// change when the body does, and a collision needs two flag sets of the same size with the same digest.
    public init(digestOf body: [UInt8]) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in body {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        let digits = String(hash, radix: 16)
        quoted =
            "\"" + String(repeating: "0", count: 16 - digits.count) + digits + "-" + String(body.count, radix: 16)
            + "\""
    }

    public var description: String { quoted }

    /// True when an `If-None-Match` field value names this tag: `*`, or a list holding it (weak or strong, since
    /// the comparison for `If-None-Match` is the weak one).
    public func isMatched(byIfNoneMatch values: [String]) -> Bool {
        for value in values {
            for element in value.split(separator: ",") {
                var candidate = Substring(element).trimmingSpaces
                if candidate == "*" { return true }
                if candidate.hasPrefix("W/") { candidate.removeFirst(2) }
                if candidate == quoted { return true }
            }
        }
        return false
    }
}

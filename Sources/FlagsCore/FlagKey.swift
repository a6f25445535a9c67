#if canImport(Glibc)
    import Glibc
#endif

/// A flag key that compares, hashes and sorts by its exact UTF-8 bytes (R2: no folding of any kind).
///
/// Swift's `String` equality is Unicode canonical equivalence: "café" with a precomposed é and "cafe" followed
/// by a combining accent are equal strings, yet they are two different keys to Pushwoosh. Every map and set of
/// flag keys (the flag set, its diffs, the keys a subscription listens to) is keyed by `FlagKey`.
public struct FlagKey: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let string: String

    public init(_ string: String) {
        self.string = string
    }

    public init(stringLiteral value: String) {
        self.string = value
    }

    public var description: String { string }

    public static func == (lhs: FlagKey, rhs: FlagKey) -> Bool {
        let left = lhs.string.utf8
        let right = rhs.string.utf8
        guard left.count == right.count else { return false }
        // A native or small string (every string the daemon builds) lends its bytes without a copy, compared
        // with one `memcmp`, not the generic comparison of two views.
        let lent = left.withContiguousStorageIfAvailable { leftBytes in
            right.withContiguousStorageIfAvailable { rightBytes in
                guard let leftBase = leftBytes.baseAddress, let rightBase = rightBytes.baseAddress else { return true }
                return memcmp(leftBase, rightBase, leftBytes.count) == 0
            }
        }
        return (lent ?? nil) ?? left.elementsEqual(right)
    }

    public func hash(into hasher: inout Hasher) {
        var text = string
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(text.utf8.count)
    }

    /// Byte order, which is also the order of the keys' Unicode scalars.
    public static func < (lhs: FlagKey, rhs: FlagKey) -> Bool {
        var left = lhs.string
        var right = rhs.string
        // Over the lent buffers: the generic `lexicographicallyPrecedes` over two UTF8Views was a tenth of a
        // warm start with 1,000 cached flags, spent sorting them.
        return left.withUTF8 { leftBytes in
            right.withUTF8 { rightBytes in
                for index in 0..<min(leftBytes.count, rightBytes.count) where leftBytes[index] != rightBytes[index] {
                    return leftBytes[index] < rightBytes[index]
                }
                return leftBytes.count < rightBytes.count
            }
        }
    }
}

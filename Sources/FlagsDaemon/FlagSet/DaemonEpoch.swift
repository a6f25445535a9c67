/// The `epoch` of the protocol: a value new at every daemon start, so a client that kept a revision can tell
/// "nothing changed" from "the daemon restarted and counts from 1 again".
///
/// 128 random bits in hex rather than the boot id and the start time: it needs no clock (a start after a clock
/// step cannot repeat an earlier value), no file, and tells nothing about the machine; two instances of the
/// daemon never share one.
enum DaemonEpoch {
    /// A new epoch: 32 lowercase hex digits from the system's random source.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return hex(high) + hex(low)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

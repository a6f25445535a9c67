/// A small, fast random number generator (SplitMix64) whose whole run follows from its seed.
///
/// The fuzz tests and the soak draw everything from one of these, so a failure found in CI is replayed by running
/// again with the seed the test printed (the soak's `--seed`).
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A number in `0..<bound`; `bound` must be positive.
    public mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }

    /// True once in `chances` draws.
    public mutating func oneIn(_ chances: Int) -> Bool {
        below(chances) == 0
    }
}

/// How much a run measures.
///
/// - `full`: the figures of docs/performance.md.
/// - `quick` (`--quick`): fewer calls of each, figures still worth reading on a quiet machine.
/// - `smoke` (`--smoke`): a few calls of each, seconds in all; the figures mean nothing, but every one is made
///   and written, so a test can show that the bench runs without waiting for its measurements.
enum Extent: String, Sendable {
    case full, quick, smoke

    /// The value for this depth.
    func pick<Value>(full: Value, quick: Value, smoke: Value) -> Value {
        switch self {
        case .full: full
        case .quick: quick
        case .smoke: smoke
        }
    }
}

import FlagsCore

@testable import FlagsDaemon

extension FlagStore {
    /// Serves `flags` as a source would, marked as coming from `source` (nil: as they are), never expiring.
    @discardableResult
    func replace(with flags: FlagSet, from source: FlagSource? = nil) -> FlagUpdate? {
        replace(with: flags, from: source, expiry: .never)
    }
}

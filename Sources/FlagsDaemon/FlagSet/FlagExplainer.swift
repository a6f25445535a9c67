import FlagsCore
import FlagsProtocol

/// Answers `explain`: the flag as `get` returns it, where it comes from, what its rule id means, the state of
/// the flag set it belongs to, and, for a key that reads as nothing, why.
struct FlagExplainer {
    let snapshot: FlagSnapshot
    /// `status` as the controller knows it (fetch time, expiry, errors, the next refresh).
    let status: StatusResult
    /// Seconds since the flags served were fetched (or the file read); nil without flags.
    let ageSeconds: Double?
    /// True when flags were served once and are gone because they reached `CacheMaxAge` (R15).
    let expired: Bool
    let changes: FlagChangeLog
    /// Subscriptions that hear of changes of the key.
    let subscriptions: Int
    /// The source serving the flags: a served flag without its source's mark is its.
    let servedBy: FlagSource

    func explain(key: String) -> ExplainResult {
        var result = ExplainResult(key: key)
        result.subscriptions = subscriptions
        result.revision = snapshot.revision
        result.changedAtRevision = changes.revision(of: key)
        result.fetchedAt = status.fetchedAt
        result.ageSeconds = ageSeconds
        result.expiresAt = status.expiresAt
        result.stale = status.stale
        result.partial = status.partial
        result.lastError = status.lastError
        result.nextRefreshAt = status.nextRefreshAt
        result.heldUntil = status.heldUntil
        result.problem = status.problem
        if let flag = snapshot.flags[key] {
            result.flag = flag
            // Where the value comes from: `override`, `file` or `pushwoosh`, as the store marked it.
            result.source = (flag.source ?? servedBy).rawValue
            result.rule = flag.isOverridden ? .override : ExplainResult.Rule(ruleId: flag.ruleId)
            return result
        }
        // R2: no folding when reading, but a person who typed the wrong case deserves to be told.
        let lowered = key.lowercased()
        result.similarKeys = snapshot.flags.sorted.map(\.key).filter { $0 != key && $0.lowercased() == lowered }
        if !result.similarKeys.isEmpty {
            result.absence = .caseDiffers
        } else if !snapshot.flags.isEmpty {
            result.absence = .notInResponse
        } else if expired {
            result.absence = .expired
        } else if status.fetchedAt == nil {
            result.absence = .noFlags
        } else {
            // A fetch succeeded with no flags at all: the plan has none, or every flag is archived (R5).
            result.absence = .notInResponse
        }
        return result
    }
}

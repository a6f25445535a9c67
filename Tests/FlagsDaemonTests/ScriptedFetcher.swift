import FlagsCore
import Foundation
import PushwooshAPI
import TestSupport
import UnixIO

@testable import FlagsDaemon

/// A flag source that answers as the test says, and counts what was asked of it.
final class ScriptedFetcher: FlagFetcher {
    let problem: String? = nil

    private struct State {
        var flagReply: Result<FeatureFlagsResponse, PushwooshError> = .success(FeatureFlagsResponse(flags: []))
        var fetches: [String] = []
        var impressionReplies: [Result<Void, PushwooshError>] = []
        var impressions: [String] = []
        var waiting: [CheckedContinuation<Void, Never>] = []
        var holdImpressions = false
        var failWhenCancelled = false
    }

    private let state = Locked(State())
    /// Fired at every fetch, for a test that waits for one.
    let fetched = ChangeSignal()

    /// What every fetch answers from now on.
    func answer(_ reply: Result<FeatureFlagsResponse, PushwooshError>) {
        state.withLock { $0.flagReply = reply }
    }

    /// The user id of every fetch so far.
    var fetches: [String] { state.withLock { $0.fetches } }

    /// From now on a fetch from a cancelled task fails as the libcurl client's does (`cancelled`), after it is
    /// counted.
    func failWhenCancelled() {
        state.withLock { $0.failWhenCancelled = true }
    }

    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError> {
        defer { fetched.fire() }
        return state.withLock {
            $0.fetches.append(userId)
            if $0.failWhenCancelled, Task.isCancelled { return .failure(.noReply("cancelled", kind: .cancelled)) }
            return $0.flagReply
        }
    }

    // MARK: Impressions

    /// Impressions sent so far, as "key/session user".
    var impressions: [String] { state.withLock { $0.impressions } }

    /// Makes every impression send wait until `release` is called (one send released per call).
    func holdImpressions() {
        state.withLock { $0.holdImpressions = true }
    }

    /// Lets the oldest waiting impression send finish with `result`.
    func release(_ result: Result<Void, PushwooshError>) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else { return nil }
            state.impressionReplies.append(result)
            return state.waiting.removeFirst()
        }
        waiter?.resume()
    }

    /// How many impression sends are waiting.
    var waitingImpressions: Int { state.withLock { $0.waiting.count } }

    func sendImpression(of flag: Flag, userId: String, date: Date) async -> Result<Void, PushwooshError> {
        let hold = state.withLock { state in
            state.impressions.append("\(flag.key)/\(userId)")
            return state.holdImpressions
        }
        guard hold else { return .success(()) }
        await withCheckedContinuation { continuation in
            state.withLock { $0.waiting.append(continuation) }
        }
        return state.withLock { $0.impressionReplies.removeFirst() }
    }
}

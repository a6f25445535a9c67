public import FlagsCore
public import FlagsProtocol
import Foundation
public import UnixIO

/// Carries out the methods that may wait, and knows what `status` reports.
public final class DaemonController: RequestHandler {
    private let store: FlagStore
    private let reloader: Reloader

    init(store: FlagStore, reloader: Reloader) {
        self.store = store
        self.reloader = reloader
    }

    /// The stack `status` reads, without waiting for a reload.
    private var stack: SourceStack { reloader.stacks.current }

    public func status() -> StatusResult {
        let stack = self.stack
        let refresherStatus = stack.refresher.status.withLock { $0 }
        let clock = stack.refresher.clock
        var status = StatusResult()
        refresherStatus.fill(&status, clock: clock)
        status.version = PWFlagsVersion.current
        status.hwid = stack.hwid
        let counts = stack.impressions.counts.withLock { $0 }
        status.impressions = StatusResult.Impressions(
            sent: counts.sent, duplicate: counts.duplicate, failed: counts.failed)
        if let local = stack.local {
            status.source = "file"
            status.applicationCode = nil
            // Edits of the file arrive through inotify, not through the refresher.
            status.fetchedAt = local.loadedAt.map { RefresherStatus.timestamp($0.timeIntervalSince1970) }
            status.nextRefreshAt = nil
            status.problem = local.problem
        } else {
            status.source = "pushwoosh"
            status.applicationCode = stack.configuration.applicationCode
        }
        status.expiresAt =
            FlagExpiry.expiresAt(local: stack.local, refresher: refresherStatus, clock: clock).stringValue
        return status
    }

    public func expiresAt() -> JSONValue {
        let stack = self.stack
        return FlagExpiry.expiresAt(
            local: stack.local, refresher: stack.refresher.status.withLock { $0 }, clock: stack.refresher.clock)
    }

    public func perform(_ call: Call, peer: PeerCredentials) async -> Result<any CallResult, RPCError> {
        switch call {
        case .refresh:
            switch await onActiveStack({ await $0.refresher.refresh() }) {
            case .success(let fromNetwork):
                let snapshot = store.current
                return .success(
                    FlagListing(revision: snapshot.revision, flags: snapshot.flags.sorted, fromNetwork: fromNetwork))
            case .failure(let error):
                return .failure(.refreshFailed(status: error.status, reason: error.reason))
            }
        case .setUserId(let requested):
            return .success(SetUserIdResult(userId: await onActiveStack { await $0.refresher.setUserId(requested) }))
        case .setAppState(let appState):
            let started = await onActiveStack { await $0.refresher.setAppState(foreground: appState == .foreground) }
            return .success(SetAppStateResult(sessionStarted: started))
        case .pushRegistered:
            let started = await onActiveStack { await $0.refresher.pushRegistered() }
            return .success(PushRegisteredResult(refreshStarted: started))
        case .logImpression(let key):
            // An impression that was sent (or found a repeat) before a reload stays answered by the old stack.
            let outcome = await onActiveStack(
                { await $0.impressions.logImpression(key: key) },
                again: { if case .failed = $0 { true } else { false } })
            return .success(outcome.result)
        case .reload:
            switch await reloader.reload() {
            case .success: return .success(EmptyResult())
            case .failure(let errors):
                return .failure(.invalidConfiguration(problems: errors.problems.map(\.description)))
            }
        case .get, .getAll, .isEnabled, .listen, .unlisten, .status:
            return .failure(.internalError("\(call.method) is answered by the socket server"))
        }
    }

    /// Carries out a control call on the stack in effect, waiting while a reload swaps it.
    ///
    /// A call that reached a stack that a reload then retired is carried out again on the new stack (when
    /// `again` says its outcome depends on it), so that every call is answered by the stack that serves after it:
    /// a `setUserId` sticks, a `refresh` asks for the new source's flags. At shutdown there is no new stack.
    private func onActiveStack<Outcome>(
        _ operation: (SourceStack) async -> Outcome,
        again: (Outcome) -> Bool = { _ in true }
    ) async -> Outcome {
        var stack = await reloader.stacks.active()
        while true {
            let outcome = await operation(stack)
            guard stack.isRetired, again(outcome) else { return outcome }
            let next = await reloader.stacks.active()
            guard next !== stack else { return outcome }
            stack = next
        }
    }
}

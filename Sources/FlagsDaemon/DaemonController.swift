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

    public func statusFields() -> [String: JSONValue] {
        let stack = self.stack
        let refresherStatus = stack.refresher.status.withLock { $0 }
        let clock = stack.refresher.clock
        var fields = refresherStatus.fields(clock: clock)
        fields["version"] = .string(PWFlagsVersion.current)
        fields["hwid"] = .string(stack.hwid)
        let counts = stack.impressions.counts.withLock { $0 }
        fields["impressions"] = [
            "sent": .number(Double(counts.sent)), "duplicate": .number(Double(counts.duplicate)),
            "failed": .number(Double(counts.failed)),
        ]
        if let local = stack.local {
            fields["source"] = "file"
            fields["applicationCode"] = .null
            // Edits of the file arrive through inotify, not through the refresher.
            fields["fetchedAt"] = RefresherStatus.timestamp(local.loadedAt?.timeIntervalSince1970)
            fields["nextRefreshAt"] = .null
            fields["problem"] = local.problem.map(JSONValue.string) ?? .null
        } else {
            fields["source"] = "pushwoosh"
            fields["applicationCode"] = .string(stack.configuration.applicationCode)
        }
        fields["expiresAt"] = FlagExpiry.expiresAt(local: stack.local, refresher: refresherStatus, clock: clock)
        return fields
    }

    public func expiresAt() -> JSONValue {
        let stack = self.stack
        return FlagExpiry.expiresAt(
            local: stack.local, refresher: stack.refresher.status.withLock { $0 }, clock: stack.refresher.clock)
    }

    public func perform(_ call: Call, peer: PeerCredentials) async -> Result<JSONValue, RPCError> {
        switch call {
        case .refresh:
            switch await onActiveStack({ await $0.refresher.refresh() }) {
            case .success(let fromNetwork):
                let snapshot = store.current
                return .success([
                    "revision": .number(Double(snapshot.revision)),
                    "flags": .array(snapshot.flags.sorted.map(\.wireValue)),
                    "fromNetwork": .bool(fromNetwork),
                ])
            case .failure(let error):
                return .failure(.refreshFailed(status: error.status, reason: error.reason))
            }
        case .setUserId(let requested):
            let userId = await onActiveStack { await $0.refresher.setUserId(requested) }
            return .success(["userId": .string(userId)])
        case .setAppState(let appState):
            let started = await onActiveStack { await $0.refresher.setAppState(foreground: appState == .foreground) }
            return .success(["sessionStarted": .bool(started)])
        case .pushRegistered:
            return .success(["refreshStarted": .bool(await onActiveStack { await $0.refresher.pushRegistered() })])
        case .logImpression(let key):
            // An impression that was sent (or found a repeat) before a reload stays answered by the old stack.
            let outcome = await onActiveStack(
                { await $0.impressions.logImpression(key: key) },
                again: { if case .failed = $0 { true } else { false } })
            switch outcome {
            case .sent: return .success(["outcome": "sent"])
            case .duplicate: return .success(["outcome": "duplicate"])
            case .noFlag: return .success(["outcome": "noFlag"])
            case .logged: return .success(["outcome": "logged"])
            case .failed(let status): return .success(["outcome": "failed", "status": .number(Double(status))])
            }
        case .reload:
            switch await reloader.reload() {
            case .success: return .success([:])
            case .failure(let errors):
                return .failure(
                    RPCError(
                        code: RPCError.invalidParamsCode,
                        message: "invalid configuration; the running one stays",
                        data: ["problems": .array(errors.problems.map { .string($0.description) })]
                    )
                )
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

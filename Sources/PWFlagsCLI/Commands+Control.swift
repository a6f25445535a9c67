import FeatureFlags
import FlagsProtocol

/// The commands that change or report the daemon's state: status, refresh, impressions, the user, the app state,
/// push registration and reload.
extension Commands {
    func status() throws(CommandError) -> ExitCode {
        _ = try arguments([], [])
        let result = try request(.status, as: StatusResult.self).jsonValue
        if invocation.json {
            Output.line(result.serialized(), exact: true)
        } else if let members = result.objectValue {
            let order = [
                "version", "source", "applicationCode", "hwid", "userId", "flags", "revision", "epoch", "fetchedAt",
                "stale",
                "partial", "lastError", "nextRefreshAt", "heldUntil", "appState", "sessionStartedAt", "connections",
                "subscriptions",
                "problem",
            ]
            let keys = order.filter { members[$0] != nil } + members.keys.filter { !order.contains($0) }.sorted()
            for key in keys { Output.line("\(key): \(Self.plain(members[key] ?? .null))") }
        }
        return .success
    }

    func refresh() throws(CommandError) -> ExitCode {
        _ = try arguments([], [])
        let listing = try request(.refresh, as: FlagListing.self)
        if invocation.json {
            Output.line(listing.jsonValue.serialized(), exact: true)
        } else {
            let origin = listing.fromNetwork == true ? "fetched from Pushwoosh" : "stored flags (no request sent)"
            Output.line("\(listing.flags.count) flags, revision \(listing.revision): \(origin)")
        }
        return .success
    }

    func impression() throws(CommandError) -> ExitCode {
        let key = try arguments([], ["key"])[0]
        let result = try request(.logImpression(key: key), as: LogImpressionResult.self)
        if invocation.json {
            Output.line(result.jsonValue.serialized(), exact: true)
        } else if case .failed(let status) = result {
            Output.line("failed (status \(status))")
        } else {
            Output.line(result.outcome)
        }
        switch result {
        case .failed, .noFlag: return .failure
        case .sent, .duplicate, .logged, .overridden: return .success
        }
    }

    func setUserId() throws(CommandError) -> ExitCode {
        let userId = try arguments([], ["user-id"])[0]
        let result = try request(.setUserId(userId), as: SetUserIdResult.self)
        Output.line(invocation.json ? result.jsonValue.serialized() : result.userId, exact: invocation.json)
        return .success
    }

    func appState() throws(CommandError) -> ExitCode {
        let text = try arguments([], ["state"])[0]
        guard let state = Call.AppState(rawValue: text) else {
            throw .usage("app-state takes foreground or background, not '\(text)'")
        }
        let result = try request(.setAppState(state), as: SetAppStateResult.self)
        let started = result.sessionStarted
        Output.line(
            invocation.json ? result.jsonValue.serialized() : (started ? "a session started" : "no new session"),
            exact: invocation.json)
        return .success
    }

    func pushRegistered() throws(CommandError) -> ExitCode {
        _ = try arguments([], [])
        let result = try request(.pushRegistered, as: PushRegisteredResult.self)
        let started = result.refreshStarted
        Output.line(
            invocation.json ? result.jsonValue.serialized() : (started ? "refresh started" : "no refresh"),
            exact: invocation.json)
        return .success
    }

    func reload() throws(CommandError) -> ExitCode {
        _ = try arguments([], [])
        let result = try request(.reload, as: EmptyResult.self)
        Output.line(invocation.json ? result.jsonValue.serialized() : "reloaded", exact: invocation.json)
        return .success
    }
}

public import Dispatch
import FlagsCore
import FlagsProtocol
import FoundationEssentials

/// What a program asks of the daemon: refreshes, impressions, the user and the app's state.
extension FeatureFlags {
    /// The app's state, for `setAppState(_:)` (the daemon's `Lifecycle=client`).
    public enum AppState: Sendable, Equatable {
        case foreground, background
    }

    /// Asks the daemon to refresh (R10), then calls `completion` on `queue` with nil or the ``ClientError``,
    /// whose `status` is the R11 status (`0`: the daemon could not be reached). With `FeatureFlagsCompat`
    /// imported, `error as NSError` is the SDK's error in `PWFeatureFlagsErrorDomain` with that status as `code`.
    ///
    /// On success the completion runs after the mirror shows the refreshed flags, so it may read them.
    public func refresh(queue: DispatchQueue = .main, completion: (@Sendable (ClientError?) -> Void)? = nil) {
        let store = self.store
        let commands = self.commands
        commands.queue.async {
            let error = Self.performRefresh(store: store, commands: commands)
            guard let completion else { return }
            queue.async { completion(error) }
        }
    }

    /// Asks the daemon to refresh; throws the ``ClientError`` (see `refresh(queue:completion:)`).
    public func refresh() async throws(ClientError) {
        let store = self.store
        let commands = self.commands
        let error: ClientError? = await withCheckedContinuation { continuation in
            commands.queue.async {
                continuation.resume(returning: Self.performRefresh(store: store, commands: commands))
            }
        }
        if let error { throw error }
    }

    /// Reports that the user reached the code behind `key` (R17). Returns at once; the daemon sends the event
    /// at most once per flag, rule and state in a session (R18) and nothing when there is no such flag.
    public func logImpression(_ key: String) {
        let commands = self.commands
        commands.queue.async { commands.notify(.logImpression(key: key)) }
    }

    /// Switches the daemon to another user; `""` goes back to the device's HWID (R8d). Returns at once.
    ///
    /// The daemon discards the old user's flags, which the mirror shows (and listeners hear) as a change.
    /// The daemon limits it to `ControlGroups`; a refused call changes nothing.
    public func setUserId(_ userId: String) {
        perform(.setUserId(userId), as: SetUserIdResult.self)
    }

    /// Tells the daemon the app came to the foreground or went to the background (R8a). Returns at once.
    public func setAppState(_ state: AppState) {
        perform(.setAppState(state == .foreground ? .foreground : .background), as: SetAppStateResult.self)
    }

    /// Tells the daemon the device registered for push notifications (R8c). Returns at once.
    public func pushRegistered() {
        perform(.pushRegistered, as: PushRegisteredResult.self)
    }

    private func perform<Answer: CallResult>(_ call: Call, as type: Answer.Type) {
        let commands = self.commands
        commands.queue.async { _ = commands.perform(call, as: type) }
    }

    /// Runs a refresh on the command queue and folds its answer into the mirror; the error, if any.
    private static func performRefresh(store: MirrorStore, commands: CommandChannel) -> ClientError? {
        // The subscription open now: the answer's revision is comparable only with its own.
        let generation = store.current.generation
        switch commands.perform(.refresh, as: FlagListing.self) {
        case .success(let listing):
            // The age on the same connection, right after: what the mirror needs to expire these flags (R15).
            let expiresAt: Date?
            switch commands.perform(.status, as: StatusResult.self) {
            case .success(let status): expiresAt = Subscriber.expiry(inStatus: status)
            case .failure: return nil
            }
            store.update { $0.applyRefresh(listing, generation: generation, expiresAt: expiresAt) }
            return nil
        case .failure(let error):
            return error
        }
    }
}

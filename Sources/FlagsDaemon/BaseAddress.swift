import Foundation
import PushwooshAPI
import Synchronization

/// The address calls go to: `ServerURL` when set; else the default, moved by `base_url` replies and kept in
/// the state directory so that a move survives a restart.
final class BaseAddress: Sendable {
    private let address: Mutex<URL>
    private let follows: Bool
    private let stateDirectory: StateDirectory
    private let logger: Logger

    static let file = "base-url"

    /// `follows` is false when `ServerURL` is set: then `base_url` is ignored (UPSTREAM.md).
    init(initial: URL, follows: Bool, stateDirectory: StateDirectory, logger: Logger) {
        var start = initial
        if follows, let saved = stateDirectory.read(Self.file).map({ String(decoding: $0, as: UTF8.self) }),
            PushwooshEndpoint.isAcceptableBase(saved), let url = URL(string: saved)
        {
            start = url
        }
        self.address = Mutex(start)
        self.follows = follows
        self.stateDirectory = stateDirectory
        self.logger = logger
    }

    var current: URL { address.withLock { $0 } }

    /// Follows a `base_url` from a successful reply.
    func move(to url: URL) {
        guard follows, PushwooshEndpoint.isAcceptableBase(url.absoluteString) else { return }
        let changed = address.withLock { current in
            defer { current = url }
            return current != url
        }
        guard changed else { return }
        logger.notice("Pushwoosh moved this application to another address", ["BASE_URL": url.absoluteString])
        do {
            try stateDirectory.writeAtomically(Self.file, Array(url.absoluteString.utf8))
        } catch {
            logger.warning("cannot keep the new address in the state directory: \(error)")
        }
    }
}

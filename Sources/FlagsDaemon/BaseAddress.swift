import FlagsCore
import FoundationEssentials
import PushwooshAPI
import Synchronization

/// The address calls go to: `ServerURL` when set; else the default, moved by `base_url` replies and kept in
/// the state directory so that a move survives a restart.
///
/// Only https moves the daemon (plain http is for `ServerURL` alone), and a kept address is used only by the
/// application code it was kept for: the state directory may outlive a change of `ApplicationCode`.
final class BaseAddress: Sendable {
    private let address: Mutex<URL>
    private let applicationCode: String
    private let follows: Bool
    private let stateDirectory: StateDirectory
    private let logger: Logger

    /// `{"applicationCode":"…","baseURL":"https://…/json/1.3/"}`. A bare URL, as older versions kept it, is
    /// not used: whose it is cannot be told.
    static let file = "base-url"

    /// `follows` is false when `ServerURL` is set: then `base_url` is ignored (README, Talking to Pushwoosh).
    init(initial: URL, applicationCode: String, follows: Bool, stateDirectory: StateDirectory, logger: Logger) {
        var start = initial
        if follows, let kept = stateDirectory.read(Self.file).flatMap({ Self.kept($0, for: applicationCode) }) {
            start = kept
        }
        self.address = Mutex(start)
        self.applicationCode = applicationCode
        self.follows = follows
        self.stateDirectory = stateDirectory
        self.logger = logger
    }

    var current: URL { address.withLock { $0 } }

    /// Follows a `base_url` from a successful reply.
    func move(to url: URL) {
        guard follows, PushwooshEndpoint.isAcceptableMove(url.absoluteString) else { return }
        let changed = address.withLock { current in
            defer { current = url }
            return current != url
        }
        guard changed else { return }
        logger.notice("Pushwoosh moved this application to another address", ["BASE_URL": url.absoluteString])
        let record = JSONValue.object([
            "applicationCode": .string(applicationCode), "baseURL": .string(url.absoluteString),
        ])
        do {
            try stateDirectory.writeAtomically(Self.file, Array(record.serialized().utf8))
        } catch {
            logger.warning("cannot keep the new address in the state directory: \(error)")
        }
    }

    /// The kept address in `bytes`, when it was kept for `applicationCode` and may still be moved to.
    static func kept(_ bytes: [UInt8], for applicationCode: String) -> URL? {
        guard let record = try? JSONValue(parsing: bytes),
            record["applicationCode"]?.stringValue == applicationCode,
            let text = record["baseURL"]?.stringValue, PushwooshEndpoint.isAcceptableMove(text)
        else { return nil }
        return URL(string: text)
    }
}

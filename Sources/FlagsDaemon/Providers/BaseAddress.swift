import FlagsCore
import FoundationEssentials
import PushwooshAPI
import UnixIO

/// The address calls go to: `ServerURL` when set; else the default, moved by `base_url` and kept in the state
/// directory so that a move survives a restart.
///
/// The rules (docs/behaviour.md, Talking to Pushwoosh): a `base_url` is followed from any reply in Pushwoosh's
/// envelope, failed ones included; JSON that is not the envelope sends the device back to the default address; a moved
/// address that has had no success for longer than `CacheMaxAge` and fails again is dropped for the default. Only https
/// moves the daemon (plain http is for `ServerURL` alone), and a kept address is used only by the application code it
/// was kept for: the state directory may outlive a change of `ApplicationCode`.
final class BaseAddress: Sendable {
    private struct State {
        var current: URL
        /// When the current moved address was last known good (the move to it or its last success), on the
        /// boot clock.
        var goodSince: Double
        /// The wall time the kept file records for `goodSince`, so that it is rewritten only now and then.
        var keptGoodAt: Double
        var cacheMaxAge: Double
    }

    private let state: Locked<State>
    private let initial: URL
    private let applicationCode: String
    private let follows: Bool
    private let stateDirectory: StateDirectory
    private let logger: Logger
    private let clock: any DaemonClock

    /// `{"format":1,"applicationCode":"…","baseURL":"https://…/json/1.3/","goodAt":1800000000}`: `goodAt` is the
    /// wall time the address was last known good. A bare URL, as older versions kept it, is not used: whose it is
    /// cannot be told. A file without `format` is format 1; a newer one is set aside (`StateFormat`).
    static let file = "base-url"
    static let stateFormat = StateFormat(file: file, newest: 1)

    /// `follows` is false when `ServerURL` is set: then `base_url` is ignored (docs/behaviour.md, Talking to
    /// Pushwoosh).
    init(
        initial: URL, applicationCode: String, follows: Bool, stateDirectory: StateDirectory, logger: Logger,
        cacheMaxAge: Duration = .seconds(24 * 3600), clock: any DaemonClock = SystemClock()
    ) {
        let bootNow = clock.bootNow()
        let wallNow = clock.wallNow()
        var start = State(current: initial, goodSince: bootNow, keptGoodAt: wallNow, cacheMaxAge: cacheMaxAge.seconds)
        if follows, let kept = Self.load(from: stateDirectory, for: applicationCode, logger: logger) {
            start.current = kept.url
            if let goodAt = kept.goodAt {
                // A wall clock set back since is taken as "good now" rather than as a time in the future.
                start.goodSince = bootNow - max(0, wallNow - goodAt)
                start.keptGoodAt = goodAt
            }
        }
        self.state = Locked(start)
        self.initial = initial
        self.applicationCode = applicationCode
        self.follows = follows
        self.stateDirectory = stateDirectory
        self.logger = logger
        self.clock = clock
    }

    var current: URL { state.withLock { $0.current } }

    /// A reload that keeps the source may change `CacheMaxAge`.
    func update(cacheMaxAge: Duration) {
        state.withLock { $0.cacheMaxAge = cacheMaxAge.seconds }
    }

    /// Applies what the outcome of a call to `address` says about the address to call next: a success with the
    /// `base_url` it sent (nil when none), or the failure, whose body may hold Pushwoosh's envelope.
    ///
    /// A reply from an address already left (a move raced it) says nothing about the current one.
    func observe(_ outcome: Result<URL?, PushwooshError>, from address: URL) {
        guard follows, address == current else { return }
        switch outcome {
        case .success(let moved):
            succeeded(at: address)
            if let moved { move(to: moved) }
        case .failure(let error):
            // A request that never left, or that a reload ended, says nothing about the address.
            guard error.kind != .notSent, error.kind != .cancelled else { return }
            switch PushwooshEnvelope.addressSignal(of: error.body) {
            case .move(let moved) where moved != address: move(to: moved)
            case .reset: backToDefault("a reply in JSON that is not Pushwoosh's envelope came", from: address)
            case .move, .none: failed(at: address)
            }
        }
    }

    /// Follows a `base_url`.
    func move(to url: URL) {
        guard follows, PushwooshEndpoint.isAcceptableMove(url.absoluteString) else { return }
        let now = (boot: clock.bootNow(), wall: clock.wallNow())
        let changed = state.withLock { state in
            guard state.current != url else { return false }
            state.current = url
            state.goodSince = now.boot
            state.keptGoodAt = now.wall
            return true
        }
        guard changed else { return }
        if url == initial {
            forget()
        } else {
            logger.notice("Pushwoosh moved this application to another address", ["BASE_URL": url.absoluteString])
            keep(url, goodAt: now.wall)
        }
    }

    private func succeeded(at address: URL) {
        guard address != initial else { return }
        let now = (boot: clock.bootNow(), wall: clock.wallNow())
        let rewrite = state.withLock { state in
            state.goodSince = now.boot
            // Rewritten at most ten times per CacheMaxAge, not at every refresh: it only bounds how long a
            // restarted daemon believes the address failed.
            guard now.wall - state.keptGoodAt >= state.cacheMaxAge / 10 else { return false }
            state.keptGoodAt = now.wall
            return true
        }
        if rewrite { keep(address, goodAt: now.wall) }
    }

    private func failed(at address: URL) {
        guard address != initial else { return }
        let now = clock.bootNow()
        let (failingFor, limit) = state.withLock { (now - $0.goodSince, $0.cacheMaxAge) }
        guard failingFor > limit else { return }
        logger.warning(
            "the moved address has failed for longer than CacheMaxAge: back to the default address",
            ["BASE_URL": address.absoluteString, "FAILING_SECONDS": String(Int(failingFor))])
        reset(from: address)
    }

    private func backToDefault(_ why: String, from address: URL) {
        guard address != initial else { return }
        logger.notice("\(why): back to the default address", ["BASE_URL": address.absoluteString])
        reset(from: address)
    }

    private func reset(from address: URL) {
        let now = (boot: clock.bootNow(), wall: clock.wallNow())
        let changed = state.withLock { state in
            guard state.current == address else { return false }
            state.current = initial
            state.goodSince = now.boot
            state.keptGoodAt = now.wall
            return true
        }
        if changed { forget() }
    }

    private func keep(_ url: URL, goodAt: Double) {
        let record = JSONValue.object([
            "format": .number(Double(Self.stateFormat.newest)),
            "applicationCode": .string(applicationCode), "baseURL": .string(url.absoluteString),
            "goodAt": .number(goodAt.rounded(.down)),
        ])
        do {
            try stateDirectory.writeAtomically(Self.file, Array(record.serialized().utf8))
        } catch {
            logger.warning("cannot keep the new address in the state directory: \(error)")
        }
    }

    private func forget() {
        do {
            try stateDirectory.remove(Self.file)
        } catch {
            logger.warning("cannot remove the kept address from the state directory: \(error)")
        }
    }

    /// The kept address and when it was last known good, as `kept` reads it; a file of a newer format is set aside.
    static func load(from directory: StateDirectory, for applicationCode: String, logger: Logger) -> (
        url: URL, goodAt: Double?
    )? {
        guard let bytes = directory.read(file) else { return nil }
        if let record = try? JSONValue(parsing: bytes), let newer = stateFormat.newer(in: record) {
            directory.setAside(stateFormat, found: newer, logger: logger)
            return nil
        }
        return kept(bytes, for: applicationCode)
    }

    /// The kept address in `bytes` and when it was last known good (wall time; nil when not recorded), when it
    /// was kept for `applicationCode` and may still be moved to.
    static func kept(_ bytes: [UInt8], for applicationCode: String) -> (url: URL, goodAt: Double?)? {
        guard let record = try? JSONValue(parsing: bytes),
            record["applicationCode"]?.stringValue == applicationCode,
            let text = record["baseURL"]?.stringValue, PushwooshEndpoint.isAcceptableMove(text),
            let url = URL(string: text)
        else { return nil }
        return (url, record["goodAt"]?.numberValue)
    }
}

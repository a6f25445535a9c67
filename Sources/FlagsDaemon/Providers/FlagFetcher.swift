import FlagsCore
import FoundationEssentials
import PushwooshAPI
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Sends to Pushwoosh: the flag requests and the impressions of `PushwooshProvider`. `PushwooshFetcher` does it
/// over HTTP; the tests script it.
protocol FlagFetcher: Sendable {
    /// Why no request can ever be sent (R16, no application code), or nil.
    var problem: String? { get }
    /// Fetches the flags of `userId`.
    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError>
    /// Sends an impression (R17).
    func sendImpression(of flag: Flag, userId: String, date: Date) async -> Result<Void, PushwooshError>
    /// A reload that keeps the source changed its request timeout or `CacheMaxAge`.
    func update(configuration: Configuration)
    /// A reload replaced the source, or the daemon stops: nothing is sent from now on.
    func retire()
    /// The sender's `Retry-After` hold, which every request and impression passes; nil when there is none.
    var retryAfterHold: RetryAfterHold? { get }
}

extension FlagFetcher {
    func update(configuration: Configuration) {}
    func retire() {}
    var retryAfterHold: RetryAfterHold? { nil }
}

/// Fetches from Pushwoosh, following its address moves (BaseAddress) when `ServerURL` is not set.
final class PushwooshFetcher: FlagFetcher {
    let problem: String?
    private let client: PushwooshClient
    private let common: CommonFields
    private let base: BaseAddress?
    private let retired = Locked(false)
    private let hold: RetryAfterHold
    var retryAfterHold: RetryAfterHold? { hold }

    init(client: PushwooshClient, common: CommonFields, base: BaseAddress?, problem: String?, cacheMaxAge: Duration) {
        self.client = client
        self.common = common
        self.base = base
        self.problem = problem
        self.hold = RetryAfterHold(cap: cacheMaxAge)
    }

    /// A reload replaced the source, or the daemon stops: nothing is sent from now on, and a reply already on its
    /// way moves no address.
    func retire() {
        retired.withLock { $0 = true }
    }

    private var isRetired: Bool { retired.withLock { $0 } }

    /// A reload that keeps the source may change the request timeout, and `CacheMaxAge`, which bounds how long a
    /// moved address may fail.
    func update(configuration: Configuration) {
        client.update(requestTimeout: configuration.requestTimeout)
        base?.update(cacheMaxAge: configuration.cacheMaxAge)
        hold.update(cap: configuration.cacheMaxAge)
    }

    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError> {
        await send(userId: userId, movedTo: \.baseURL) { client, address, common in
            await client.getFeatureFlags(base: address, common: common)
        }
    }

    func sendImpression(of flag: Flag, userId: String, date: Date) async -> Result<Void, PushwooshError> {
        let event = PushwooshEvent.impression(of: flag, date: date, utcOffsetSeconds: Self.utcOffset(at: date))
        return await send(userId: userId, movedTo: \.baseURL) { client, address, common in
            await client.postEvent(base: address, common: common, event: event)
        }.map { _ in () }
    }

    /// Every request's one path: nothing without an address, once retired, or during a `Retry-After` hold; the
    /// reply may move the address (`movedTo`), and a failed one may start a hold.
    private func send<Reply>(
        userId: String, movedTo: (Reply) -> URL?,
        _ call: (PushwooshClient, URL, CommonFields) async -> Result<Reply, PushwooshError>
    ) async -> Result<Reply, PushwooshError> {
        guard let base else { return .failure(.notSent(problem ?? "no server address")) }
        guard !isRetired else { return .failure(.notSent("the flag source was replaced or is stopping")) }
        if let refusal = hold.refusal() { return .failure(refusal) }
        var common = self.common
        common.userId = userId
        let address = base.current
        let result = await call(client, address, common)
        if !isRetired { base.observe(result.map(movedTo), from: address) }
        if case .failure(let error) = result { hold.note(error) }
        return result
    }
}

extension PushwooshFetcher {
    /// The local time zone's offset from UTC at `date`, in seconds, from the C library (`TZ`, /etc/localtime):
    /// Foundation's `TimeZone.current` needs ICU for anything but UTC.
    static func utcOffset(at date: Date) -> Int {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return 0 }
        return parts.tm_gmtoff
    }
}

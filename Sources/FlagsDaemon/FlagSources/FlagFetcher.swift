import FlagsCore
import FoundationEssentials
import PushwooshAPI
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Where flags come from: Pushwoosh, or the local file. The refresher treats both the same way.
protocol FlagFetcher: Sendable {
    /// True when complete responses are worth keeping on disk (R7); the local file is its own cache.
    var persists: Bool { get }
    /// Why no request can ever be sent (R16, no application code), or nil.
    var problem: String? { get }
    /// True when `fetch` has already put the flags it returns in the store (the local file does, under its own
    /// read lock): applying them again after the await could put back an older read over a newer one.
    var appliesFlags: Bool { get }
    /// Fetches the flags of `userId`.
    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError>
    /// Sends an impression (R17); nil when there is nowhere to send it (the local source logs it instead).
    func sendImpression(of flag: Flag, userId: String, date: Date) async -> Result<Void, PushwooshError>?
}

extension FlagFetcher {
    /// Only the local file applies its own reads; a fetcher over the network leaves that to the refresher.
    var appliesFlags: Bool { false }
}

/// Fetches from Pushwoosh, following its address moves (BaseAddress) when `ServerURL` is not set.
final class PushwooshFetcher: FlagFetcher {
    let persists = true
    let appliesFlags = false
    let problem: String?
    private let client: PushwooshClient
    private let common: CommonFields
    private let base: BaseAddress?
    private let retired = Locked(false)

    init(client: PushwooshClient, common: CommonFields, base: BaseAddress?, problem: String?) {
        self.client = client
        self.common = common
        self.base = base
        self.problem = problem
    }

    /// A reload replaced the source, or the daemon stops: nothing is sent from now on, and a reply already on its
    /// way moves no address.
    func retire() {
        retired.withLock { $0 = true }
    }

    private var isRetired: Bool { retired.withLock { $0 } }

    /// A reload that keeps the source may change `CacheMaxAge`, which bounds how long a moved address may fail.
    func update(cacheMaxAge: Duration) {
        base?.update(cacheMaxAge: cacheMaxAge)
    }

    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError> {
        guard let base else { return .failure(.notSent(problem ?? "no server address")) }
        guard !isRetired else { return .failure(.notSent("the flag source was replaced or is stopping")) }
        var common = self.common
        common.userId = userId
        let address = base.current
        let result = await client.getFeatureFlags(base: address, common: common)
        if !isRetired { base.observe(result.map(\.baseURL), from: address) }
        return result
    }

    func sendImpression(of flag: Flag, userId: String, date: Date) async -> Result<Void, PushwooshError>? {
        guard let base else { return .failure(.notSent(problem ?? "no server address")) }
        guard !isRetired else { return .failure(.notSent("the flag source was replaced or is stopping")) }
        var common = self.common
        common.userId = userId
        let offset = Self.utcOffset(at: date)
        let event = PushwooshEvent.impression(of: flag, date: date, utcOffsetSeconds: offset)
        let address = base.current
        let result = await client.postEvent(base: address, common: common, event: event)
        if !isRetired { base.observe(result.map(\.baseURL), from: address) }
        return result.map { _ in () }
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

/// Re-reads the local flags file: every read is a complete response.
struct LocalFileFetcher: FlagFetcher {
    let persists = false
    let appliesFlags = true
    let source: LocalFlagSource
    var problem: String? { nil }

    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError> {
        switch source.load() {
        case .success: return .success(FeatureFlagsResponse(flags: source.currentFlags, partial: false))
        case .failure(let error): return .failure(.notSent(error.reason))
        }
    }

    func sendImpression(of flag: Flag, userId: String, date: Date) async -> Result<Void, PushwooshError>? { nil }
}

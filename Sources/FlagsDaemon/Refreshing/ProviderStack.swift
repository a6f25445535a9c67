import FlagsCore
import FoundationEssentials
import PushwooshAPI
import UnixIO

/// Everything that depends on where flags come from: the local file or Pushwoosh, the refresher, impressions.
///
/// A reload that changes the source (application code, server, token, HWID, user, file) builds a new stack
/// and retires the old one; the flag store and the socket server stay, so clients never notice.
final class ProviderStack: Sendable {
    /// The configuration the stack was built with; a reload that keeps the source changes only its timers and
    /// request timeout (`update(configuration:)`), never what this holds about the source.
    let configuration: Configuration
    let hwid: String
    /// The local file or Pushwoosh: everything that differs between them is the source's to say.
    let provider: any FlagProvider
    let refresher: Refresher
    let impressions: ImpressionReporter
    private let retired = Locked(false)

    init(
        configuration: Configuration,
        environment: [String: String],
        store: FlagStore,
        stateDirectory: StateDirectory,
        logger: Logger,
        metrics: DaemonMetrics = DaemonMetrics(),
        evaluations: EvaluationTally = EvaluationTally()
    ) {
        self.configuration = configuration
        let hwid = Self.resolveHWID(configuration, stateDirectory: stateDirectory, logger: logger)
        self.hwid = hwid
        let provider: any FlagProvider
        if configuration.usesLocalSource {
            provider = LocalFileProvider(file: FlagsFile(path: configuration.localFlagsFile, logger: logger))
        } else {
            let token = Self.readAPIToken(configuration, environment: environment, logger: logger)
            let client = PushwooshClient(
                apiToken: token, requestTimeout: configuration.requestTimeout, caFile: configuration.caFile)
            let fetcher = Self.makePushwooshFetcher(
                configuration, client: client, hwid: hwid, stateDirectory: stateDirectory, logger: logger)
            provider = PushwooshProvider(
                fetcher: fetcher, applicationCode: configuration.applicationCode,
                diskCache: FlagCache(directory: stateDirectory), seed: SeedFile.load(configuration, logger: logger))
        }
        self.provider = provider
        let refresher = Refresher(
            provider: provider,
            store: store,
            stateDirectory: stateDirectory,
            configuration: configuration,
            hwid: hwid,
            logger: logger,
            metrics: metrics,
            evaluations: evaluations
        )
        self.refresher = refresher
        self.impressions = ImpressionReporter(fetcher: provider.impressionSink, store: store, logger: logger) {
            refresher.status.withLock { ($0.session, $0.userId) }
        }
    }

    /// What stored flags are valid for (R7): the source, the application code and the user.
    var identity: String {
        provider.identity(userId: refresher.status.withLock { $0.userId })
    }

    /// Serves what can be served without the network: the local file, or the disk cache valid for this source,
    /// or nothing, replacing whatever a previous stack served (a reload serves what a restart would).
    func start() async {
        await refresher.start()
    }

    /// Runs the timers and a watched source's watch until cancelled: each change it reports is read and served
    /// through the refresher, as a `refresh` is.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.refresher.run() }
            if case .watched(let watch) = provider.upkeep {
                let refresher = self.refresher
                group.addTask { await watch.run { _ = await refresher.readItself() } }
            }
        }
    }

    /// A reload that keeps the source: new timers and request timeout, the same session and impression ledger.
    func update(configuration: Configuration) async {
        provider.upstream?.fetcher.update(configuration: configuration)
        await refresher.update(configuration: configuration)
    }

    /// Retires the stack (a reload replaced it, or the daemon stops): what is in flight is cancelled, so that
    /// stopping never waits for a slow server, and from now on it sends nothing and writes nothing, not even
    /// for a reply that was already on its way.
    func retire() async {
        retired.withLock { $0 = true }
        provider.upstream?.fetcher.retire()
        await refresher.retire()
        await impressions.retire()
    }

    /// True once `retire()` began: a call that was carried out here must be carried out again on the new stack.
    var isRetired: Bool { retired.withLock { $0 } }

    // MARK: Building

    /// The HWID: configured, else derived from the machine id, else a random id kept in the state directory.
    static func resolveHWID(_ configuration: Configuration, stateDirectory: StateDirectory, logger: Logger) -> String {
        if let hwid = configuration.hwid { return hwid }
        if let derived = Systemd.machineAppSpecificID() { return derived }
        if let saved = stateDirectory.read("hwid").map({ String(decoding: $0, as: UTF8.self) }), saved.count == 32 {
            return saved
        }
        let generated = UUID().uuidString.replacing("-", with: "").lowercased()
        logger.warning("no /etc/machine-id: using a random HWID kept in the state directory")
        try? stateDirectory.writeAtomically("hwid", Array(generated.utf8))
        return generated
    }

    /// Pushwoosh at the configured or default address; a rejected address makes a fetcher that never sends (R16).
    static func makePushwooshFetcher(
        _ configuration: Configuration,
        client: PushwooshClient,
        hwid: String,
        stateDirectory: StateDirectory,
        logger: Logger
    ) -> PushwooshFetcher {
        let common = CommonFields(
            applicationCode: configuration.applicationCode,
            hwid: hwid,
            userId: hwid,
            version: PWFlagsVersion.current,
            deviceType: configuration.deviceType
        )
        switch PushwooshEndpoint.base(
            serverURL: configuration.serverURL, applicationCode: configuration.applicationCode)
        {
        case .success(let url):
            let base = BaseAddress(
                initial: url, applicationCode: configuration.applicationCode, follows: configuration.serverURL == nil,
                stateDirectory: stateDirectory, logger: logger, cacheMaxAge: configuration.cacheMaxAge)
            return PushwooshFetcher(
                client: client, common: common, base: base, problem: nil, cacheMaxAge: configuration.cacheMaxAge)
        case .failure(let error):
            return PushwooshFetcher(
                client: client, common: common, base: nil, problem: fetchProblem(configuration, error),
                cacheMaxAge: configuration.cacheMaxAge)
        }
    }

    /// Why flags can never be requested with `configuration` (R16), or nil; `--check-config` reports it too.
    static func fetchProblem(_ configuration: Configuration) -> String? {
        guard !configuration.usesLocalSource,
            case .failure(let error) = PushwooshEndpoint.base(
                serverURL: configuration.serverURL, applicationCode: configuration.applicationCode)
        else { return nil }
        return fetchProblem(configuration, error)
    }

    private static func fetchProblem(_ configuration: Configuration, _ error: PushwooshError) -> String {
        if let serverURL = configuration.serverURL, !PushwooshEndpoint.isAcceptableBase(serverURL) {
            return "ServerURL \(serverURL) does not end with json/1.3/, so flags are never requested (R16)"
        }
        return error.reason
    }

    /// The API token from `APITokenFile` or the systemd credential; never logged.
    static func readAPIToken(_ configuration: Configuration, environment: [String: String], logger: Logger) -> String? {
        guard let path = configuration.resolvedAPITokenFile(environment: environment) else {
            logger.notice("no API token is configured; requests go without Authorization")
            return nil
        }
        switch ConfigurationLoader.readAPIToken(atPath: path) {
        case .success(let token): return token.isEmpty ? nil : String(decoding: token, as: UTF8.self)
        case .failure(let error):
            logger.warning(
                "cannot read the API token file; requests go without Authorization",
                ["TOKEN_FILE": path, "REASON": error.reason])
            return nil
        }
    }
}

import FlagsCore
import Foundation
import PushwooshAPI

/// Everything that depends on where flags come from: the local file or Pushwoosh, the refresher, impressions.
///
/// A reload that changes the source (application code, server, token, HWID, user, file) builds a new stack
/// and retires the old one; the flag store and the socket server stay, so clients never notice.
final class SourceStack: Sendable {
    let configuration: Configuration
    let hwid: String
    let local: LocalFlagSource?
    let refresher: Refresher
    let impressions: ImpressionReporter
    private let logger: Logger

    init(
        configuration: Configuration,
        environment: [String: String],
        store: FlagStore,
        stateDirectory: StateDirectory,
        logger: Logger
    ) {
        self.configuration = configuration
        self.logger = logger
        let hwid = Self.resolveHWID(configuration, stateDirectory: stateDirectory, logger: logger)
        self.hwid = hwid
        let local =
            configuration.usesLocalSource
            ? LocalFlagSource(path: configuration.localFlagsFile, store: store, logger: logger) : nil
        self.local = local
        let fetcher: any FlagFetcher
        if let local {
            fetcher = LocalFileFetcher(source: local)
        } else {
            fetcher = Self.makePushwooshFetcher(
                configuration, environment: environment, hwid: hwid, stateDirectory: stateDirectory, logger: logger)
        }
        let refresher = Refresher(
            fetcher: fetcher,
            store: store,
            stateDirectory: stateDirectory,
            configuration: configuration,
            hwid: hwid,
            logger: logger
        )
        self.refresher = refresher
        self.impressions = ImpressionReporter(fetcher: fetcher, store: store, logger: logger) {
            refresher.status.withLock { ($0.session, $0.userId) }
        }
    }

    /// What stored flags are valid for (R7): the source, the application code and the user.
    var identity: String {
        let user = refresher.status.withLock { $0.userId }
        return local != nil ? "file" : "pushwoosh \(configuration.applicationCode) \(user)"
    }

    /// Serves what can be served without the network: the local file, or the disk cache.
    func start() async {
        local?.load()
        await refresher.start()
    }

    /// Runs the timers and the file watch until cancelled.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.refresher.run() }
            if let local {
                group.addTask { await local.run() }
            }
        }
    }

    /// Cancels what is in flight, so that stopping never waits for a slow server.
    func shutdown() async {
        await refresher.shutdown()
        await impressions.shutdown()
    }

    /// The line `systemctl status` shows.
    func statusLine(store: FlagStore) -> String {
        let count = store.current.flags.count
        if let local {
            if let problem = local.problem { return "Local file: \(count) flags; \(problem)" }
            return "Local file: \(count) flags from \(local.path ?? "-")"
        }
        let status = refresher.status.withLock { $0 }
        var line = "Pushwoosh \(configuration.applicationCode): \(count) flags"
        if let problem = status.problem { return line + "; not fetching: \(problem)" }
        if let fetchedAt = status.fetchedAt {
            line += ", fetched \(Self.age(refresher.clock.bootNow() - fetchedAt)) ago"
        } else {
            line += ", not fetched yet"
        }
        if let error = status.lastError {
            line += "; offline: last refresh failed with status \(error.status)"
        }
        if status.cacheError != nil { line += "; cannot write the disk cache" }
        return line
    }

    static func age(_ seconds: Double) -> String {
        switch seconds {
        case ..<90: "\(max(0, Int(seconds))) s"
        case ..<5400: "\(Int(seconds / 60)) min"
        default: "\(Int(seconds / 3600)) h"
        }
    }

    // MARK: Building

    /// The HWID: configured, else derived from the machine id, else a random id kept in the state directory.
    static func resolveHWID(_ configuration: Configuration, stateDirectory: StateDirectory, logger: Logger) -> String {
        if let hwid = configuration.hwid { return hwid }
        if let derived = Systemd.machineAppSpecificID() { return derived }
        if let saved = stateDirectory.read("hwid").map({ String(decoding: $0, as: UTF8.self) }), saved.count == 32 {
            return saved
        }
        let generated = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        logger.warning("no /etc/machine-id: using a random HWID kept in the state directory")
        try? stateDirectory.writeAtomically("hwid", Array(generated.utf8))
        return generated
    }

    /// Pushwoosh at the configured or default address; a rejected address makes a fetcher that never sends (R16).
    static func makePushwooshFetcher(
        _ configuration: Configuration,
        environment: [String: String],
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
        let token = readAPIToken(configuration, environment: environment, logger: logger)
        let client = PushwooshClient(apiToken: token, requestTimeout: configuration.requestTimeout)
        switch PushwooshEndpoint.base(
            serverURL: configuration.serverURL, applicationCode: configuration.applicationCode)
        {
        case .success(let url):
            let base = BaseAddress(
                initial: url, follows: configuration.serverURL == nil, stateDirectory: stateDirectory, logger: logger)
            return PushwooshFetcher(client: client, common: common, base: base, problem: nil)
        case .failure(let error):
            let problem: String
            if let serverURL = configuration.serverURL, !PushwooshEndpoint.isAcceptableBase(serverURL) {
                problem = "ServerURL \(serverURL) does not end with json/1.3/, so flags are never requested (R16)"
            } else {
                problem = error.reason
            }
            return PushwooshFetcher(client: client, common: common, base: nil, problem: problem)
        }
    }

    /// The API token from `APITokenFile` or the systemd credential; never logged.
    static func readAPIToken(_ configuration: Configuration, environment: [String: String], logger: Logger) -> String? {
        guard let path = configuration.resolvedAPITokenFile(environment: environment) else {
            logger.notice("no API token is configured; requests go without Authorization")
            return nil
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            logger.warning("cannot read the API token file; requests go without Authorization", ["TOKEN_FILE": path])
            return nil
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return token.isEmpty ? nil : token
    }
}

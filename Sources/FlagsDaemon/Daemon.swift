public import FlagsCore
import Foundation
import PushwooshAPI
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The whole daemon: builds the services from a configuration, serves until SIGTERM or SIGINT, shuts down.
public final class Daemon: Sendable {
    private let configuration: Configuration
    private let environment: [String: String]
    private let logger: Logger

    public init(configuration: Configuration, environment: [String: String], logger: Logger) {
        self.configuration = configuration
        self.environment = environment
        self.logger = logger
    }

    /// Why the daemon could not start; `main` prints it and exits 1.
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs until a shutdown signal, then shuts down gracefully.
    public func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        let signals = SignalWatcher.signals([SIGTERM, SIGINT, SIGHUP])

        let stateDirectory = StateDirectory(path: configuration.resolvedStateDirectory(environment: environment))
        if let problem = stateDirectory.prepare() {
            logger.warning("the state directory is unusable; nothing survives a restart: \(problem)")
        }
        let hwid = resolveHWID(stateDirectory)
        let store = FlagStore()
        let local =
            configuration.usesLocalSource
            ? LocalFlagSource(path: configuration.localFlagsFile, store: store, logger: logger) : nil
        local?.load()
        let fetcher = makeFetcher(local: local, hwid: hwid, stateDirectory: stateDirectory)
        let refresher = Refresher(
            fetcher: fetcher,
            store: store,
            stateDirectory: stateDirectory,
            configuration: configuration,
            hwid: hwid,
            logger: logger
        )
        await refresher.start()

        let impressions = ImpressionReporter(fetcher: fetcher, store: store, logger: logger) {
            refresher.status.withLock { ($0.session, $0.userId) }
        }

        let (listenFD, ownedPath) = try openSocket()
        let controller = DaemonController(
            configuration: configuration,
            hwid: hwid,
            store: store,
            local: local,
            refresher: refresher,
            impressions: impressions,
            logger: logger
        )
        let (groups, unknownGroups) = AccessPolicy.resolveGroups(configuration.controlGroups)
        if !unknownGroups.isEmpty {
            logger.warning(
                "ControlGroups names groups that do not exist", ["GROUPS": unknownGroups.joined(separator: " ")])
        }
        let access = AccessPolicy(controlGroups: configuration.controlGroups.isEmpty ? nil : groups)
        let watchdog = Systemd.watchdogInterval()
        let server: SocketServer
        do {
            server = try SocketServer(
                listenFD: listenFD,
                store: store,
                handler: controller,
                limits: ServerLimits(configuration),
                access: access,
                logger: logger,
                heartbeat: watchdog.map { (interval: $0 / 2, action: { Systemd.notifyWatchdog() }) }
            )
        } catch {
            close(listenFD)
            throw StartError(description: "cannot start the socket server: \(error)")
        }

        let status = statusLine(store: store, local: local)
        logger.notice(
            "pwflagsd \(PWFlagsVersion.current) serving",
            ["SOCKET": ownedPath ?? "(socket activation)", "SOURCE": status])
        Systemd.notifyReady(status: status)

        await withTaskGroup(of: Void.self) { group in
            group.addTask { await server.run() }
            group.addTask { await refresher.run() }
            if let local {
                group.addTask { await local.run() }
            }
            for await number in signals {
                if number == SIGHUP {
                    logger.notice("SIGHUP: reload is not implemented yet; the running configuration stays")
                    continue
                }
                logger.notice("shutting down", ["SIGNAL": number == SIGTERM ? "SIGTERM" : "SIGINT"])
                break
            }
            Systemd.notifyStopping()
            server.shutdown()
            // Requests to Pushwoosh are not worth waiting for at shutdown: their callers get status 0 now.
            await refresher.shutdown()
            await impressions.shutdown()
            // The server drains first; the watchers stop after it (reverse start order).
            await group.next()
            group.cancelAll()
        }
        if let ownedPath { unlink(ownedPath) }
        logger.info("stopped")
    }

    /// The HWID: configured, else derived from the machine id, else a random id kept in the state directory.
    /// The local file when `ApplicationCode` is empty, else Pushwoosh at the configured or default address.
    private func makeFetcher(local: LocalFlagSource?, hwid: String, stateDirectory: StateDirectory) -> any FlagFetcher {
        if let local { return LocalFileFetcher(source: local) }
        let common = CommonFields(
            applicationCode: configuration.applicationCode,
            hwid: hwid,
            userId: hwid,
            version: PWFlagsVersion.current,
            deviceType: configuration.deviceType
        )
        let client = PushwooshClient(apiToken: readAPIToken(), requestTimeout: configuration.requestTimeout)
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
    private func readAPIToken() -> String? {
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

    private func resolveHWID(_ stateDirectory: StateDirectory) -> String {
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

    /// The activated socket when systemd passes one; else `SocketPath`, replacing a stale file, never stealing
    /// a live one. Returns the path to unlink at exit, nil for an activated socket that systemd owns.
    private func openSocket() throws -> (Int32, String?) {
        let activated = Systemd.activatedSockets()
        for fd in activated.rejected {
            logger.warning(
                "ignored a passed file descriptor that is not a listening Unix stream socket", ["FD": String(fd)])
        }
        if let fd = activated.sockets.first {
            try UnixSocket.setNonBlocking(fd)
            return (fd, nil)
        }
        let path = configuration.socketPath
        switch UnixSocket.probe(path) {
        case .inUse:
            throw StartError(description: "another pwflagsd is already serving \(path); not taking its socket")
        case .notASocket:
            throw StartError(description: "\(path) exists and is not a socket; remove it or choose another SocketPath")
        case .stale:
            logger.notice("replacing a stale socket left by an earlier daemon", ["SOCKET": path])
            unlink(path)
        case .absent:
            break
        }
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        do {
            return (try UnixSocket.listen(at: path, mode: configuration.socketMode), path)
        } catch {
            throw StartError(description: "cannot listen on \(path): \(error.reason)")
        }
    }

    private func statusLine(store: FlagStore, local: LocalFlagSource?) -> String {
        let count = store.current.flags.count
        if let local {
            if let problem = local.problem { return "Local file: \(count) flags; \(problem)" }
            return "Local file: \(count) flags from \(local.path ?? "-")"
        }
        return "Pushwoosh \(configuration.applicationCode): \(count) flags"
    }
}

import FlagsCore
import FlagsProtocol
import PushwooshAPI

/// Flags from `LocalFlagsFile` (`FlagsFile`): read at start, on every change of the file and on
/// `refresh`. The file is its own cache, so its flags never expire, and impressions go to the log.
final class LocalFileProvider: FlagProvider {
    let mark = FlagSource.file
    let applicationCode: String? = nil
    let diskCache: FlagCache? = nil
    let problem: String? = nil
    let impressionSink: (any FlagFetcher)? = nil
    let servesItself = true
    let file: FlagsFile

    init(file: FlagsFile) {
        self.file = file
    }

    func start() {
        file.start()
    }

    func run() async {
        await file.run()
    }

    func update(configuration: Configuration) {}

    func retire() {
        file.retire()
    }

    /// Reads the file, which serves what it read under its read lock (see `servesItself`).
    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError> {
        switch file.load() {
        case .success: .success(FeatureFlagsResponse(flags: file.currentFlags, partial: false))
        case .failure(let error): .failure(.notSent(error.reason))
        }
    }

    // MARK: Reporting

    /// Edits of the file arrive through inotify, not through the refresher: the read time is the file's own, and
    /// no refresh is due.
    func fill(_ status: inout StatusResult, refresher: RefresherStatus) {
        status.source = mark.rawValue
        status.applicationCode = nil
        status.fetchedAt = file.loadedAt.map { RefresherStatus.timestamp($0.timeIntervalSince1970) }
        status.nextRefreshAt = nil
        status.problem = file.problem
    }

    func ageSeconds(refresher: RefresherStatus, clock: any DaemonClock) -> Double? {
        file.loadedAt.map { max(0, clock.wallNow() - $0.timeIntervalSince1970) }
    }

    func statusLine(flags count: Int, refresher: RefresherStatus, clock: any DaemonClock) -> String {
        if let problem = file.problem { return "Local file: \(count) flags; \(problem)" }
        return "Local file: \(count) flags from \(file.path ?? "-")"
    }
}

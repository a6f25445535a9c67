import FlagsCore
import FlagsProtocol
import PushwooshAPI

/// Flags from `LocalFlagsFile` (`FlagsFile`): read at start, on every change of the file and on `refresh`. The
/// file is its own cache, so its flags never expire, and impressions go to the log.
final class LocalFileProvider: FlagProvider {
    let mark = FlagSource.file
    let file: FlagsFile

    init(file: FlagsFile) {
        self.file = file
    }

    var upkeep: SourceUpkeep { .watched(file) }

    /// Reads the file; what it read reaches the store through the feed, as a fetch does.
    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError> {
        switch file.read() {
        case .success(let flags): .success(FeatureFlagsResponse(flags: flags, partial: false))
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
        return "Local file: \(count) flags from \(file.location)"
    }
}

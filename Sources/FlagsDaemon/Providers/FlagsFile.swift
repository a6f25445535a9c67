import FlagsCore
import FoundationEssentials
import PushwooshAPI
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The local flag source: `LocalFlagsFile` in the `getFeatureFlags` `response` shape, served when
/// `ApplicationCode` is empty, re-read when it changes and on `refresh`.
///
/// An unreadable or invalid file never costs the flags already served: the last good set stays, and the
/// reason goes to the log and to `status`.
final class FlagsFile: Service {
    let path: String?
    private let store: FlagStore
    private let logger: Logger
    private let state = Locked(State())
    /// One read at a time, so that reads finish in the order they start: a read that began before an edit can
    /// never land after a later read and put back what the file no longer holds.
    private let reading = Locked(())

    private struct State {
        var loadedAt: Date?
        var problem: String?
        var flags: [Flag] = []
        /// Set when a reload replaced this source (or at shutdown): it no longer writes to the store.
        var retired = false
    }

    /// The biggest file read, as for an upstream reply.
    static let maximumFileBytes = 8 * 1024 * 1024

    init(path: String?, store: FlagStore, logger: Logger) {
        // Absolute, so that a later change of working directory cannot move the file or its watch.
        self.path = path.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        self.store = store
        self.logger = logger
    }

    /// When the flags served were last read successfully.
    var loadedAt: Date? { state.withLock { $0.loadedAt } }

    /// The flags of the last good read.
    var currentFlags: [Flag] { state.withLock { $0.flags } }

    /// Why the last read failed, or nil when it succeeded.
    var problem: String? { state.withLock { $0.problem } }

    /// Reads the file and serves what it holds; on failure keeps the last good flags and returns the reason.
    @discardableResult
    func load() -> Result<Int, LocalFlagsError> {
        reading.withLock { _ in loadNow() }
    }

    /// Serves the file, or nothing when it cannot be read: a source that starts never serves what the one before
    /// it served.
    func start() {
        reading.withLock { _ in
            if case .failure = loadNow() { replace(with: FlagSet()) }
        }
    }

    /// Makes `flags` what the store serves, unless retired.
    func serve(_ flags: FlagSet) {
        reading.withLock { _ in _ = replace(with: flags) }
    }

    /// The file's one path into the store; called with `reading` held. Its flags never expire.
    @discardableResult
    private func replace(with flags: FlagSet) -> FlagUpdate? {
        guard !state.withLock({ $0.retired }) else { return nil }
        return store.replace(with: flags, from: .file, expiry: .never)
    }

    /// Stops serving: later reads, the file watch's included, no longer touch the store. Waits for a read that
    /// is running, so that none lands after this returns.
    func retire() {
        reading.withLock { _ in state.withLock { $0.retired = true } }
    }

    private func loadNow() -> Result<Int, LocalFlagsError> {
        guard !state.withLock({ $0.retired }) else {
            return .failure(LocalFlagsError.retired)
        }
        guard let path else {
            let error = LocalFlagsError.notConfigured
            state.withLock { $0.problem = error.reason }
            return .failure(error)
        }
        switch Self.read(path) {
        case .success(let flags):
            // The problem is cleared before the store publishes, so that a listener told of the change and then
            // asking `status` never reads the old problem beside the new flags.
            let first = state.withLock { state in
                defer {
                    state.loadedAt = Date()
                    state.problem = nil
                    state.flags = flags
                }
                return state.loadedAt == nil
            }
            let update = replace(with: FlagSet(flags))
            StatusChange.signal.signal()
            // A re-read that changes nothing (a refresh, a touch) is not worth an info line.
            logger.log(
                first || update != nil ? .info : .debug,
                "loaded the local flags file",
                ["FLAGS_FILE": path, "FLAG_COUNT": String(flags.count), "REVISION": String(store.current.revision)]
            )
            return .success(flags.count)
        case .failure(let error):
            state.withLock { $0.problem = error.reason }
            StatusChange.signal.signal()
            logger.warning("kept the last good flags: \(error.reason)", ["FLAGS_FILE": path])
            return .failure(error)
        }
    }

    /// Reads and decodes a flags file.
    static func read(_ path: String) -> Result<[Flag], LocalFlagsError> {
        let data: [UInt8]
        do {
            data = try FileReading.contents(ofPath: path, limit: maximumFileBytes)
        } catch  where error.errno == EFBIG {
            return .failure(.tooLarge(path: path, limit: maximumFileBytes))
        } catch {
            return .failure(.unreadable(path: path, cause: error))
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: data)
        } catch {
            return .failure(.invalidJSON(path: path, detail: "\(error)"))
        }
        do {
            return .success(try FeatureFlagsResponse.decode(responseObject: value).flags)
        } catch {
            return .failure(.notAFlagsResponse(path: path, detail: error.reason))
        }
    }

    /// Watches the file with inotify until cancelled, re-reading it after each change.
    ///
    /// The directory is watched, not the file, so that editors that write a new file and rename it over the old
    /// one, and files that appear later, are both seen. Events within `settleDelay` are read as one change.
    func run() async {
        guard let path else { return await Self.waitForCancellation() }
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        guard let inotify = try? InotifyDescriptor() else {
            logger.warning("cannot watch the local flags file; edits are seen on refresh only", ["FLAGS_FILE": path])
            return await Self.waitForCancellation()
        }
        do {
            try inotify.watch(directory, for: [.closeWrite, .movedTo, .movedFrom, .delete, .attributes])
        } catch {
            logger.warning(
                "cannot watch the directory of the local flags file; edits are seen on refresh only",
                ["FLAGS_FILE": path, "ERRNO": String(error.errno)]
            )
            inotify.close()
            return await Self.waitForCancellation()
        }
        let watcher = InotifyWatcher(inotify: inotify, name: name)
        // `self` strongly: the closure lives only as long as this call, which holds `self` anyway. (A weak capture
        // gave the file a weak-reference side table, which LeakSanitizer reported at exit once the watch ended.)
        guard await watcher.run(onChange: { self.load() }) else {
            logger.warning("cannot watch the local flags file; edits are seen on refresh only", ["FLAGS_FILE": path])
            return await Self.waitForCancellation()
        }
    }
}

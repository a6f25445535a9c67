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
/// It reads and watches; what a read found reaches the store through the refresher's feed, as a fetch from
/// Pushwoosh does. An unreadable or invalid file never costs the flags already served: the last good set stays,
/// and the reason goes to the log and to `status`.
final class FlagsFile: FlagWatch {
    let path: String?
    private let logger: Logger
    /// One read at a time, so that what the last read found is what `problem` and `loadedAt` say.
    private let state = Locked(State())

    private struct State {
        var loadedAt: Date?
        var problem: String?
    }

    /// The watch of the file's directory: added before the first read, so that a change made between that read
    /// and `run` is not missed (its events wait in the descriptor until `run` reads them).
    private let watch = Locked(Watch.unarmed)

    private enum Watch: Sendable {
        case unarmed
        case armed(InotifyDescriptor)
        /// inotify is missing (no `errno`), or the directory cannot be watched.
        case unavailable(errno: Int32?)
        case running
    }

    /// The biggest file read, as for an upstream reply.
    static let maximumFileBytes = 8 * 1024 * 1024

    init(path: String?, logger: Logger) {
        // Absolute, so that a later change of working directory cannot move the file or its watch.
        self.path = path.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        self.logger = logger
    }

    deinit {
        if case .armed(let inotify) = watch.withLock({ $0 }) { inotify.close() }
    }

    var location: String { path ?? "-" }

    /// When the flags served were last read successfully.
    var loadedAt: Date? { state.withLock { $0.loadedAt } }

    /// Why the last read failed, or nil when it succeeded.
    var problem: String? { state.withLock { $0.problem } }

    /// Reads the file. A failure is logged and kept for `status` until a read succeeds; the caller keeps serving
    /// the last good flags.
    func read() -> Result<[Flag], LocalFlagsError> {
        arm()
        return state.withLock { state in
            guard let path else {
                state.problem = LocalFlagsError.notConfigured.reason
                return .failure(.notConfigured)
            }
            let result = Self.read(path)
            switch result {
            case .success:
                // Cleared before the feed serves the read, so that a listener told of the change and then
                // asking `status` never reads the old problem beside the new flags.
                state.loadedAt = Date()
                state.problem = nil
            case .failure(let error):
                state.problem = error.reason
                logger.warning("kept the last good flags: \(error.reason)", ["FLAGS_FILE": path])
            }
            StatusChange.signal.signal()
            return result
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

    /// Watches the file with inotify until cancelled, calling `changed` after each change; events within
    /// `InotifyWatcher.settleDelay` are read as one change. The watch was added by the first read, if there was
    /// one, so that nothing changed since that read goes unseen.
    func run(changed: @escaping @Sendable () async -> Void) async {
        guard let path else { return }
        arm()
        let taken = watch.withLock { watch -> Watch in
            defer { if case .armed = watch { watch = .running } }
            return watch
        }
        switch taken {
        case .armed(let inotify):
            let watcher = InotifyWatcher(inotify: inotify, name: URL(fileURLWithPath: path).lastPathComponent)
            let watched = await watcher.run(onChange: changed)
            // The watcher closed the descriptor: a later run arms again.
            watch.withLock { $0 = .unarmed }
            guard watched else {
                logger.warning(
                    "cannot watch the local flags file; edits are seen on refresh only", ["FLAGS_FILE": path])
                return
            }
        case .unavailable(errno: let errno?):
            logger.warning(
                "cannot watch the directory of the local flags file; edits are seen on refresh only",
                ["FLAGS_FILE": path, "ERRNO": String(errno)]
            )
        case .unavailable(errno: nil):
            logger.warning("cannot watch the local flags file; edits are seen on refresh only", ["FLAGS_FILE": path])
        case .unarmed, .running:
            return
        }
    }

    /// Adds the watch of the file's directory, once: the directory is watched, not the file, so that editors that
    /// write a new file and rename it over the old one, and files that appear later, are both seen.
    private func arm() {
        guard let path else { return }
        watch.withLock { watch in
            switch watch {
            case .unarmed, .unavailable: break
            case .armed, .running: return
            }
            guard let inotify = try? InotifyDescriptor() else {
                watch = .unavailable(errno: nil)
                return
            }
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            do {
                try inotify.watch(directory, for: [.closeWrite, .movedTo, .movedFrom, .delete, .attributes])
                watch = .armed(inotify)
            } catch {
                inotify.close()
                watch = .unavailable(errno: (error as? SystemError)?.errno ?? EINVAL)
            }
        }
    }
}

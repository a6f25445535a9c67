import FlagsCore
import FlagsProtocol
import Synchronization

/// The local overrides (`setOverride`, `clearOverride`): applied through the flag store, kept in the state
/// directory so that they survive restarts, reloads and user changes.
///
/// The file holds the `listOverrides` object, written atomically after each change; a corrupt file is logged and
/// ignored (the daemon starts with no overrides and serves its source), never a crash.
final class LocalOverrides: Sendable {
    static let file = "overrides.json"

    private let store: FlagStore
    private let directory: StateDirectory
    private let logger: Logger
    /// One change at a time, so that the file always ends up holding the latest set: two writers never cross.
    private let changing = Mutex(())

    init(store: FlagStore, directory: StateDirectory, logger: Logger) {
        self.store = store
        self.directory = directory
        self.logger = logger
    }

    /// The overrides kept by the previous run; none when there is no file or it is corrupt (logged).
    static func load(from directory: StateDirectory, logger: Logger) -> [FlagOverride] {
        guard let bytes = directory.read(file) else { return [] }
        guard let value = try? JSONValue(parsing: bytes), let list = OverrideList(result: value) else {
            logger.warning(
                "ignored the overrides file: it is corrupt; no flag is overridden until one is set again",
                ["OVERRIDES_FILE": directory.file(file), "PWFLAGS_EVENT": "overrides-corrupt"])
            return []
        }
        let kept = Array(list.overrides.prefix(FlagOverride.limit))
        if !kept.isEmpty {
            logger.notice(
                "flags are overridden on this device", ["OVERRIDE_COUNT": String(kept.count), "FLAG_KEYS": keys(kept)])
        }
        return kept
    }

    /// `setOverride`: answers with the flag now served for the key, as `get` would.
    func set(_ override: FlagOverride) -> Result<any CallResult, RPCError> {
        changing.withLock { _ in
            guard store.mayOverride(override.key, limit: FlagOverride.limit) else {
                return .failure(.invalidParams("key", "is one override too many: at most \(FlagOverride.limit)"))
            }
            let flag = store.setOverride(override)
            logger.notice("a flag is overridden on this device", ["FLAG_KEY": override.key])
            save()
            return .success(GetResult(flag: flag))
        }
    }

    /// `clearOverride`: the key's override, or every override when `key` is nil.
    func clear(_ key: String?) -> Result<any CallResult, RPCError> {
        changing.withLock { _ in
            let cleared = store.clearOverride(key)
            if !cleared.isEmpty {
                logger.notice("overrides cleared", ["FLAG_KEYS": cleared.joined(separator: ",")])
                save()
            }
            return .success(ClearOverrideResult(cleared: cleared))
        }
    }

    /// `listOverrides`.
    func list() -> OverrideList { OverrideList(overrides: store.overrides) }

    /// Writes the overrides in effect (removes the file when there is none); a failure is logged, and the
    /// overrides still hold until the daemon stops.
    private func save() {
        let overrides = store.overrides
        do {
            if overrides.isEmpty {
                try directory.remove(Self.file)
            } else {
                var bytes: [UInt8] = []
                OverrideList(overrides: overrides).write(to: &bytes)
                bytes.append(UInt8(ascii: "\n"))
                try directory.writeAtomically(Self.file, bytes)
            }
        } catch {
            logger.warning(
                "cannot save the overrides; they hold until the daemon stops: \(error)",
                ["OVERRIDES_FILE": directory.file(Self.file)])
        }
    }

    private static func keys(_ overrides: [FlagOverride]) -> String {
        overrides.map(\.key).joined(separator: ",")
    }
}

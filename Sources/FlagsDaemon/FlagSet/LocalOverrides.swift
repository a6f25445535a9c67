import FlagsCore
import FlagsProtocol
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The local overrides (`setOverride`, `clearOverride`): applied through the flag store, kept in the state
/// directory so that they survive restarts, reloads and user changes.
///
/// The file holds the `listOverrides` object and its `format`, written atomically after each change; a corrupt
/// file is logged and ignored (the daemon starts with no overrides and serves its source), never a crash. A file
/// without `format` is format 1; a newer one is set aside (`StateFormat`).
final class LocalOverrides: Sendable {
    static let file = "overrides.json"
    static let stateFormat = StateFormat(file: file, newest: 1)

    private let store: FlagStore
    private let directory: StateDirectory
    private let logger: Logger
    /// One change at a time, so that the file always ends up holding the latest set: two writers never cross.
    /// It holds each override's object as the file has it, encoded once when it is set: a change encodes only
    /// what it changes, and the file is put together from these (their total is bounded by `maximumBytes`).
    private let changing: Locked<[FlagKey: [UInt8]]>
    /// Whether the last write of the file failed, so that the file may not hold what `changing` does.
    private let unsaved = Locked(false)

    /// The most bytes all overrides together may take in the file (2 MiB): a bound on what each change writes and
    /// syncs, on what the daemon reads at start, and on the memory overrides hold.
    static let maximumBytes = 2 << 20

    init(store: FlagStore, directory: StateDirectory, logger: Logger) {
        self.store = store
        self.directory = directory
        self.logger = logger
        changing = Locked(
            Dictionary(store.overrides.map { (FlagKey($0.key), Self.encoded($0)) }, uniquingKeysWith: { $1 }))
    }

    /// An override's object in the file.
    static func encoded(_ override: FlagOverride) -> [UInt8] {
        var bytes: [UInt8] = []
        override.writeWire(to: &bytes)
        return bytes
    }

    /// The overrides kept by the previous run; none when there is no file or it is corrupt (logged).
    static func load(from directory: StateDirectory, logger: Logger) -> [FlagOverride] {
        let bytes: [UInt8]
        switch directory.reading(file, limit: maximumBytes + 64) {
        case .success(nil):
            return []
        case .success(let read?):
            bytes = read
        case .failure(let error):
            logger.warning(
                "ignored the overrides file: \(error.errno == EFBIG ? "it is over \(maximumBytes) bytes" : error.description)"
                    + "; no flag is overridden until one is set again",
                ["OVERRIDES_FILE": directory.file(file), "PWFLAGS_EVENT": "overrides-refused"])
            return []
        }
        let value = try? JSONValue(parsing: bytes)
        if let value, let newer = stateFormat.newer(in: value) {
            directory.setAside(stateFormat, found: newer, logger: logger)
            return []
        }
        guard let value, let list = OverrideList(result: value) else {
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
    func set(_ override: FlagOverride) -> Result<GetResult, RPCError> {
        changing.withLock { encoded in
            guard store.mayOverride(override.key, limit: FlagOverride.limit) else {
                return .failure(.invalidParams("key", "is one override too many: at most \(FlagOverride.limit)"))
            }
            let key = FlagKey(override.key)
            let bytes = Self.encoded(override)
            let others = encoded.values.reduce(0) { $0 + $1.count + 1 } - (encoded[key].map { $0.count + 1 } ?? 0)
            guard others + bytes.count + 1 <= Self.maximumBytes else {
                return .failure(
                    .invalidParams(
                        "properties",
                        "would take the overrides past \(Self.maximumBytes) bytes (\(others) are set): clear some first"
                    ))
            }
            // The same override again (a script that sets it in a loop) writes nothing and logs nothing: the file
            // already holds it, unless the last write failed.
            if encoded[key] == bytes, !unsaved.withLock({ $0 }) {
                return .success(GetResult(flag: store.setOverride(override)))
            }
            encoded[key] = bytes
            let flag = store.setOverride(override)
            logger.notice("a flag is overridden on this device", ["FLAG_KEY": override.key])
            save(encoded)
            // The status line counts overrides, and one that changes no value tells no store observer.
            StatusChange.signal.signal()
            return .success(GetResult(flag: flag))
        }
    }

    /// `clearOverride`: the key's override, or every override when `key` is nil.
    func clear(_ key: String?) -> Result<ClearOverrideResult, RPCError> {
        changing.withLock { encoded in
            let cleared = store.clearOverride(key)
            for key in cleared { encoded[FlagKey(key)] = nil }
            if !cleared.isEmpty {
                logger.notice("overrides cleared", ["FLAG_KEYS": cleared.joined(separator: ",")])
                save(encoded)
                StatusChange.signal.signal()
            }
            return .success(ClearOverrideResult(cleared: cleared))
        }
    }

    /// `listOverrides`.
    func list() -> OverrideList { OverrideList(overrides: store.overrides) }

    /// Writes the overrides in effect (removes the file when there is none), put together from their objects
    /// encoded when each was set; a failure is logged, and the overrides still hold until the daemon stops.
    private func save(_ encoded: [FlagKey: [UInt8]]) {
        do {
            if encoded.isEmpty {
                try directory.remove(Self.file)
            } else {
                var bytes: [UInt8] = []
                bytes.reserveCapacity(encoded.values.reduce(32) { $0 + $1.count + 1 })
                bytes.append(contentsOf: #"{"format":\#(Self.stateFormat.newest),"overrides":["#.utf8)
                for (position, entry) in encoded.sorted(by: { $0.key < $1.key }).enumerated() {
                    if position > 0 { bytes.append(UInt8(ascii: ",")) }
                    bytes.append(contentsOf: entry.value)
                }
                bytes.append(contentsOf: "]}\n".utf8)
                try directory.writeAtomically(Self.file, bytes)
            }
            unsaved.withLock { $0 = false }
        } catch {
            unsaved.withLock { $0 = true }
            logger.warning(
                "cannot save the overrides; they hold until the daemon stops: \(error)",
                ["OVERRIDES_FILE": directory.file(Self.file)])
        }
    }

    private static func keys(_ overrides: [FlagOverride]) -> String {
        overrides.map(\.key).joined(separator: ",")
    }
}

import FlagsCore
import PushwooshAPI

/// The last complete response on disk (R7): with the application code and user it was fetched for, and when.
///
/// Format 2 keeps the fetch time on both clocks: the wall clock (Unix seconds, judged after a reboot) and the
/// boot clock with the boot's id (exact in the same boot, whatever the wall clock did). Format 1, without the
/// boot clock, is still read. A newer format is set aside unread (`StateFormat`); format 2 is raised only when a
/// reader of format 2 would misread the file.
struct FlagCache: Sendable {
    static let file = "flags-cache.json"
    static let format = 2
    static let readableFormats = [1, 2]
    static let stateFormat = StateFormat(file: file, newest: format)

    let directory: StateDirectory

    /// A cached response.
    struct Entry: Sendable, Equatable {
        var applicationCode: String
        var userId: String
        /// Unix seconds.
        var fetchedAt: Double
        /// The boot the fetch happened in; nil in format 1.
        var bootID: String?
        /// Boot-clock seconds of the fetch, in that boot.
        var bootFetchedAt: Double?
        var flags: [Flag]

        /// What `CacheAge` judges the entry's age by.
        var record: CacheAge.Record {
            CacheAge.Record(wallFetchedAt: fetchedAt, bootID: bootID, bootFetchedAt: bootFetchedAt)
        }
    }

    /// Why a cache file was not used.
    enum Rejection: Error, Equatable, CustomStringConvertible {
        case missing
        /// Not a file the daemon reads: a FIFO, a device, a directory, too large, or one another user could plant.
        case refused(String)
        case corrupt(String)
        /// A newer version wrote it in a format this daemon does not read: it is set aside.
        case newerFormat(Int)
        case otherApplication
        case otherUser
        case tooOld(ageSeconds: Double)

        var description: String {
            switch self {
            case .missing: "no cache"
            case .refused(let reason): "the cache file is refused (\(reason))"
            case .corrupt(let reason): "the cache file is corrupt (\(reason))"
            case .newerFormat(let format): "the cache file has format \(format), newer than this pwflagsd reads"
            case .otherApplication: "the cache belongs to another application code"
            case .otherUser: "the cache belongs to another user"
            case .tooOld(let age): "the cache is \(Int(age)) s old, past CacheMaxAge"
            }
        }
    }

    /// The cache, when it belongs to this application and user (R7); its age is judged by the caller (`CacheAge`).
    func load(applicationCode: String, userId: String) -> Result<Entry, Rejection> {
        let bytes: [UInt8]
        switch directory.reading(Self.file, limit: StateDirectory.maximumFileBytes) {
        case .success(let read?): bytes = read
        case .success(nil): return .failure(.missing)
        case .failure(let error): return .failure(.refused(error.description))
        }
        let entry: Entry
        switch Self.decode(bytes) {
        case .success(let decoded): entry = decoded
        case .failure(let rejection): return .failure(rejection)
        }
        guard entry.applicationCode == applicationCode else { return .failure(.otherApplication) }
        guard entry.userId == userId else { return .failure(.otherUser) }
        return .success(entry)
    }

    /// Writes the entry atomically: a crash leaves the old cache or the new one.
    func store(_ entry: Entry) throws(StateDirectoryError) {
        var members: [String: JSONValue] = [
            "format": .number(Double(Self.format)),
            "applicationCode": .string(entry.applicationCode),
            "userId": .string(entry.userId),
            "fetchedAt": .number(entry.fetchedAt),
            "response": FeatureFlagsResponse(flags: entry.flags).jsonValue,
        ]
        if let bootID = entry.bootID, let bootFetchedAt = entry.bootFetchedAt {
            members["bootId"] = .string(bootID)
            members["bootTime"] = .number(bootFetchedAt)
        }
        let value = JSONValue.object(members)
        var bytes: [UInt8] = []
        value.write(to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        try directory.writeAtomically(Self.file, bytes)
    }

    func remove() throws(StateDirectoryError) {
        try directory.remove(Self.file)
    }

    /// Sets aside a file of a newer format (`load` said `.newerFormat`), so that no flag is served from it.
    func setAside(found format: Int, logger: Logger) {
        directory.setAside(Self.stateFormat, found: format, logger: logger)
    }

    static func decode(_ bytes: [UInt8]) -> Result<Entry, Rejection> {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            return .failure(.corrupt("not JSON: \(error)"))
        }
        if let newer = stateFormat.newer(in: value) { return .failure(.newerFormat(newer)) }
        guard let format = value["format"]?.integerValue, readableFormats.contains(format),
            let code = value["applicationCode"]?.stringValue,
            let user = value["userId"]?.stringValue, let fetchedAt = value["fetchedAt"]?.numberValue,
            let response = value["response"]
        else { return .failure(.corrupt("missing members")) }
        do {
            let decoded = try FeatureFlagsResponse.decode(responseObject: response)
            // Both or neither: a boot id without its boot-clock time cannot judge an age.
            let bootID = value["bootId"]?.stringValue
            let bootTime = value["bootTime"]?.numberValue
            return .success(
                Entry(
                    applicationCode: code, userId: user, fetchedAt: fetchedAt, bootID: bootTime == nil ? nil : bootID,
                    bootFetchedAt: bootID == nil ? nil : bootTime, flags: decoded.flags))
        } catch {
            return .failure(.corrupt(error.reason))
        }
    }
}

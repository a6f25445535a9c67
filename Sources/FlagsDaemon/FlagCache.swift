import FlagsCore
import PushwooshAPI

/// The last complete response on disk (R7): with the application code and user it was fetched for, and when.
struct FlagCache: Sendable {
    static let file = "flags-cache.json"
    static let format = 1

    let directory: StateDirectory

    /// A cached response.
    struct Entry: Sendable, Equatable {
        var applicationCode: String
        var userId: String
        /// Unix seconds.
        var fetchedAt: Double
        var flags: [Flag]
    }

    /// Why a cache file was not used.
    enum Rejection: Error, Equatable, CustomStringConvertible {
        case missing
        case corrupt(String)
        case otherApplication
        case otherUser
        case tooOld(ageSeconds: Double)
        case fromTheFuture

        var description: String {
            switch self {
            case .missing: "no cache"
            case .corrupt(let reason): "the cache file is corrupt (\(reason))"
            case .otherApplication: "the cache belongs to another application code"
            case .otherUser: "the cache belongs to another user"
            case .tooOld(let age): "the cache is \(Int(age)) s old, past CacheMaxAge"
            case .fromTheFuture: "the cache's fetch time is in the future (has the clock moved back?)"
            }
        }
    }

    /// The cache, when it is usable for this application and user at `now` (R7).
    func load(applicationCode: String, userId: String, now: Double, maxAge: Double) -> Result<Entry, Rejection> {
        guard let bytes = directory.read(Self.file) else { return .failure(.missing) }
        let entry: Entry
        switch Self.decode(bytes) {
        case .success(let decoded): entry = decoded
        case .failure(let rejection): return .failure(rejection)
        }
        guard entry.applicationCode == applicationCode else { return .failure(.otherApplication) }
        guard entry.userId == userId else { return .failure(.otherUser) }
        guard entry.fetchedAt <= now + 60 else { return .failure(.fromTheFuture) }
        guard now - entry.fetchedAt < maxAge else { return .failure(.tooOld(ageSeconds: now - entry.fetchedAt)) }
        return .success(entry)
    }

    /// Writes the entry atomically: a crash leaves the old cache or the new one.
    func store(_ entry: Entry) throws(StateDirectoryError) {
        let value: JSONValue = [
            "format": .number(Double(Self.format)),
            "applicationCode": .string(entry.applicationCode),
            "userId": .string(entry.userId),
            "fetchedAt": .number(entry.fetchedAt),
            "response": FeatureFlagsResponse(flags: entry.flags).jsonValue,
        ]
        var bytes: [UInt8] = []
        value.write(to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        try directory.writeAtomically(Self.file, bytes)
    }

    func remove() throws(StateDirectoryError) {
        try directory.remove(Self.file)
    }

    static func decode(_ bytes: [UInt8]) -> Result<Entry, Rejection> {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            return .failure(.corrupt("not JSON: \(error)"))
        }
        guard value["format"]?.integerValue == format, let code = value["applicationCode"]?.stringValue,
            let user = value["userId"]?.stringValue, let fetchedAt = value["fetchedAt"]?.numberValue,
            let response = value["response"]
        else { return .failure(.corrupt("missing members")) }
        do {
            let decoded = try FeatureFlagsResponse.decode(responseObject: response)
            return .success(Entry(applicationCode: code, userId: user, fetchedAt: fetchedAt, flags: decoded.flags))
        } catch {
            return .failure(.corrupt(error.reason))
        }
    }
}

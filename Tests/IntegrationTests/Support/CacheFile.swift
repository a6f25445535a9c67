import FlagsCore
import Foundation

/// The daemon's disk cache as a test reads it: the FlagCache format (`format`, `applicationCode`, `userId`,
/// `fetchedAt`, `response.flags`; format 2 adds `bootId` and `bootTime`), parsed without the daemon's code.
struct CacheFile {
    var applicationCode: String
    var userId: String
    var fetchedAt: Double
    var flags: [JSONValue]

    /// Why a cache file does not decode.
    struct Corrupt: Error, CustomStringConvertible {
        var description: String
    }

    /// The cache at `path`: nil when there is none; throws when there is one and it does not decode.
    static func read(_ path: String) throws -> CacheFile? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: [UInt8](data))
        } catch {
            throw Corrupt(description: "not JSON (\(data.count) bytes): \(error)")
        }
        guard let format = value["format"]?.integerValue, [1, 2].contains(format),
            let code = value["applicationCode"]?.stringValue,
            let user = value["userId"]?.stringValue, let fetchedAt = value["fetchedAt"]?.numberValue,
            let flags = value["response"]?["flags"]?.arrayValue
        else { throw Corrupt(description: "missing members in \(value.serialized())") }
        return CacheFile(applicationCode: code, userId: user, fetchedAt: fetchedAt, flags: flags)
    }

    /// Makes the cache at `path` `seconds` older, on both of its clocks (`fetchedAt`, and `bootTime` when it
    /// has one): a cache as a daemon wrote it that long ago, without waiting that long.
    static func age(_ path: String, by seconds: Double) throws {
        guard let data = FileManager.default.contents(atPath: path),
            var members = try JSONValue(parsing: [UInt8](data)).objectValue
        else { throw Corrupt(description: "no cache object at \(path)") }
        for name in ["fetchedAt", "bootTime"] {
            if let value = members[name]?.numberValue { members[name] = .number(value - seconds) }
        }
        try Data(JSONValue.object(members).serialized().utf8).write(to: URL(fileURLWithPath: path))
    }

    /// The `n` property of the flag `gen`: the generation the crash test wrote.
    var generation: Int? {
        flags.first { $0["key"]?.stringValue == "gen" }?["properties"]?["n"]?.integerValue
    }
}

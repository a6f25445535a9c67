public import FlagsCore

/// The flags a device image ships for its first boot (`[FeatureFlags] SeedFile=`), as `pwflags export-seed`
/// prints them on a golden device:
///
///     {"pwflagsdSeed":1,"applicationCode":"ABCDE-12345","exportedAt":"2026-12-06T21:00:00Z",
///      "flags":[{"key":"new_checkout","enabled":true,"ruleId":"r_1","properties":{…}}, …]}
///
/// Each flag is the protocol's flag object without `source`: the daemon marks the flags it serves from a seed
/// `seed`.
public struct FlagSeed: Sendable, Equatable {
    /// The format this code writes; a seed of another format is refused, never guessed at.
    public static let format = 1

    /// The Pushwoosh application the flags were fetched for: a seed of another application is never served.
    public var applicationCode: String
    /// When the seed was exported (ISO 8601 UTC), for people; nil when the file does not say.
    public var exportedAt: String?
    public var flags: [Flag]

    public init(applicationCode: String, exportedAt: String?, flags: [Flag]) {
        self.applicationCode = applicationCode
        self.exportedAt = exportedAt
        self.flags = flags
    }

    /// Why a seed could not be read.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case notJSON(String)
        case otherFormat(Int?)
        case missing(String)
        case invalidFlag(Int)

        public var description: String {
            switch self {
            case .notJSON(let detail): "not JSON: \(detail)"
            case .otherFormat(let format?): "format \(format), not \(FlagSeed.format)"
            case .otherFormat(nil): "no pwflagsdSeed format: not a seed"
            case .missing(let member): "no \(member)"
            case .invalidFlag(let index): "flag \(index) is not a flag object"
            }
        }
    }

    /// Reads a seed.
    public static func decode(_ bytes: [UInt8]) -> Result<FlagSeed, Problem> {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            return .failure(.notJSON("\(error)"))
        }
        let format = value["pwflagsdSeed"]?.integerValue
        guard format == Self.format else { return .failure(.otherFormat(format)) }
        guard let applicationCode = value["applicationCode"]?.stringValue else {
            return .failure(.missing("applicationCode"))
        }
        guard let objects = value["flags"]?.arrayValue else { return .failure(.missing("flags")) }
        var flags: [Flag] = []
        flags.reserveCapacity(objects.count)
        for (index, object) in objects.enumerated() {
            guard var flag = Flag(wire: object) else { return .failure(.invalidFlag(index)) }
            flag.source = nil
            flag.sourceValue = nil
            flags.append(flag)
        }
        return .success(
            FlagSeed(applicationCode: applicationCode, exportedAt: value["exportedAt"]?.stringValue, flags: flags))
    }

    /// The seed as its file holds it: one flag a line, so that a person can read and diff it.
    public func encoded() -> [UInt8] {
        var output = Array(#"{"pwflagsdSeed":1,"applicationCode":"#.utf8)
        JSONValue.writeString(applicationCode, to: &output)
        if let exportedAt {
            output.append(contentsOf: #","exportedAt":"#.utf8)
            JSONValue.writeString(exportedAt, to: &output)
        }
        output.append(contentsOf: #","flags":["#.utf8)
        for (index, flag) in flags.sorted(by: { $0.key < $1.key }).enumerated() {
            output.append(contentsOf: (index == 0 ? "\n" : ",\n").utf8)
            var bare = flag
            bare.source = nil
            bare.sourceValue = nil
            bare.writeWire(to: &output)
        }
        output.append(contentsOf: "\n]}\n".utf8)
        return output
    }
}

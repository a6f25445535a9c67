import FlagsCore
import PWFlagsTestKit

/// The flags the soak writes to the daemon's file: random additions, removals and modifications around a
/// target count, over a fixed universe of keys so that removed keys come back and keyed subscribers can ask
/// for keys that do not exist yet.
struct FlagModel {
    /// Every key a flag may have: `flag_0` … up to one and a half times the target count.
    let universe: [String]
    private(set) var flags: [String: Flag] = [:]
    private let target: Int
    private var version = 0

    init(count: Int, random: inout SeededGenerator) {
        target = count
        universe = (0..<(count + count / 2)).map { "flag_\($0)" }
        for key in universe.prefix(count) {
            flags[key] = Self.makeFlag(key, version: 0, random: &random)
        }
    }

    /// The flags sorted by key, as the file and `getAll` list them.
    var sorted: [Flag] {
        flags.values.sorted { $0.key < $1.key }
    }

    /// Makes one to four changes, each visible to `get`; returns how many keys were added, removed, modified.
    mutating func change(random: inout SeededGenerator) -> (added: Int, removed: Int, modified: Int) {
        version += 1
        var outcome = (added: 0, removed: 0, modified: 0)
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let absent = universe.filter { flags[$0] == nil }
            switch Int.random(in: 0..<3, using: &random) {
            case 0 where !absent.isEmpty && flags.count < target + target / 4:
                guard let key = absent.randomElement(using: &random) else { continue }
                flags[key] = Self.makeFlag(key, version: version, random: &random)
                outcome.added += 1
            case 1 where flags.count > target - target / 4:
                guard let key = flags.keys.randomElement(using: &random) else { continue }
                flags[key] = nil
                outcome.removed += 1
            default:
                guard let key = flags.keys.randomElement(using: &random), var flag = flags[key] else { continue }
                Self.modify(&flag, version: version, random: &random)
                flags[key] = flag
                outcome.modified += 1
            }
        }
        return outcome
    }

    private static func makeFlag(_ key: String, version: Int, random: inout SeededGenerator) -> Flag {
        var flag = Flag(
            key: key,
            isEnabled: Bool.random(using: &random),
            ruleId: ["default", "r_\(Int.random(in: 1...99, using: &random))"].randomElement(using: &random)
                ?? "default",
            properties: [
                "color": .string(["green", "blue", "red"].randomElement(using: &random) ?? "green"),
                "limit": .number(Double(Int.random(in: 0...1000, using: &random))),
                "beta": .bool(Bool.random(using: &random)),
                "version": .number(Double(version)),
            ]
        )
        if Int.random(in: 0..<4, using: &random) == 0 {
            flag.properties["layout"] = ["columns": .number(Double(Int.random(in: 1...4, using: &random)))]
            flag.properties["steps"] = ["cart", "pay"]
        }
        return flag
    }

    /// Changes the flag for sure (its `version` property) and maybe more: state, rule, a killed rule, properties.
    private static func modify(_ flag: inout Flag, version: Int, random: inout SeededGenerator) {
        flag.properties["version"] = .number(Double(version))
        switch Int.random(in: 0..<6, using: &random) {
        case 0: flag.isEnabled.toggle()
        case 1: flag.ruleId = "r_\(Int.random(in: 100...199, using: &random))"
        case 2: flag.ruleId = ""
        case 3: flag.properties["extra"] = flag.properties["extra"] == nil ? "x" : nil
        case 4: flag.properties["color"] = .string(["green", "blue", "red"].randomElement(using: &random) ?? "red")
        default: break
        }
    }
}

import FlagsCore
import Foundation
import TestSupport
import Testing

/// The shipped `config/pwflagsd.conf`, and the key tables of docs/configuration.md, must not drift from the code.
@Suite(.hangLimit) struct ReferenceConfigurationTests {
    /// The repository's root, found from this file's place in `Tests/FlagsCoreTests/`.
    private static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private static func referenceText() throws -> String {
        let url = repositoryRoot.appendingPathComponent("config/pwflagsd.conf")
        return try String(contentsOf: url, encoding: .utf8)
    }

    @Test func referenceFileParsesToTheDefaults() throws {
        var configuration = Configuration()
        let problems = ConfigurationParser.parse(
            text: try Self.referenceText(), file: "config/pwflagsd.conf", into: &configuration)
        #expect(problems == [])
        #expect(configuration == Configuration())
    }

    /// Uncommenting every entry must still give the defaults: the commented values are the real ones.
    @Test func uncommentedReferenceEntriesAreTheDefaults() throws {
        let lines = try Self.referenceText().split(separator: "\n", omittingEmptySubsequences: false)
        let uncommented = lines.map { line in
            guard line.hasPrefix("#"), let key = line.dropFirst().split(separator: "=").first,
                ConfigurationKey.allCases.contains(where: { $0.name == key })
            else { return String(line) }
            return String(line.dropFirst())
        }
        var configuration = Configuration()
        let problems = ConfigurationParser.parse(
            text: uncommented.joined(separator: "\n"), file: "config/pwflagsd.conf", into: &configuration)
        #expect(problems == [])
        #expect(configuration == Configuration())
    }

    @Test func referenceFileListsEveryKeyInItsSection() throws {
        let keys = Self.keys(in: try Self.referenceText()) { line in
            line.hasPrefix("[")
                ? .section(String(line.dropFirst().dropLast()))
                : line.hasPrefix("#")
                    ? .key(line.dropFirst().split(separator: "=").first.map(String.init)) : .other
        }
        #expect(keys == ConfigurationKey.allCases)
    }

    /// docs/configuration.md has a `## [Section]` per section, each with a table row per key of it, in the order of
    /// the code.
    @Test func configurationPageListsEveryKeyInItsSection() throws {
        let page = try String(
            contentsOf: Self.repositoryRoot.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        let keys = Self.keys(in: page) { line in
            line.hasPrefix("## [")
                ? .section(String(line.dropFirst(4).prefix { $0 != "]" }))
                : line.hasPrefix("| `")
                    ? .key(line.dropFirst(3).split(separator: "`").first.map(String.init)) : .other
        }
        #expect(keys == ConfigurationKey.allCases)
    }

    /// What a line of a listing of keys is.
    enum ListingLine {
        case section(String)
        /// A line that may name a key (nil: it cannot).
        case key(String?)
        case other
    }

    /// The keys `text` lists, in order, each expected under its own section: `read` says what each line is.
    static func keys(in text: String, read: (Substring) -> ListingLine) -> [ConfigurationKey] {
        var section: String?
        var seen: [ConfigurationKey] = []
        for line in text.split(separator: "\n") {
            switch read(line) {
            case .section(let name): section = name
            case .key(let name?) where ConfigurationKey.allCases.contains(where: { $0.name == name }):
                let key = section.flatMap(ConfigurationSection.init(rawValue:)).flatMap {
                    ConfigurationKey(name: name, in: $0)
                }
                #expect(key != nil, "\(name) is under [\(section ?? "")]")
                if let key { seen.append(key) }
            case .key, .other: continue
            }
        }
        return seen
    }
}

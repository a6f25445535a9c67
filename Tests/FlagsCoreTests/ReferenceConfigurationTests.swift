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
        var section: String?
        var seen: [ConfigurationKey] = []
        for line in try Self.referenceText().split(separator: "\n") {
            if line.hasPrefix("[") {
                section = String(line.dropFirst().dropLast())
            } else if line.hasPrefix("#"), let name = line.dropFirst().split(separator: "=").first,
                ConfigurationKey.allCases.contains(where: { $0.name == name })
            {
                let key = section.flatMap(ConfigurationSection.init(rawValue:)).flatMap {
                    ConfigurationKey(name: String(name), in: $0)
                }
                #expect(key != nil, "\(name) is under [\(section ?? "")]")
                guard let key else { continue }
                seen.append(key)
            }
        }
        #expect(seen == ConfigurationKey.allCases)
    }

    /// docs/configuration.md has a `## [Section]` per section, each with a table row per key of it, in the order of
    /// the code.
    @Test func configurationPageListsEveryKeyInItsSection() throws {
        let page = try String(
            contentsOf: Self.repositoryRoot.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        var section: String?
        var seen: [ConfigurationKey] = []
        for line in page.split(separator: "\n") {
            if line.hasPrefix("## [") {
                section = String(line.dropFirst(4).prefix { $0 != "]" })
            } else if line.hasPrefix("| `"), let name = line.dropFirst(3).split(separator: "`").first,
                ConfigurationKey.allCases.contains(where: { $0.name == name })
            {
                let key = section.flatMap(ConfigurationSection.init(rawValue:)).flatMap {
                    ConfigurationKey(name: String(name), in: $0)
                }
                #expect(key != nil, "\(name) is under [\(section ?? "")]")
                guard let key else { continue }
                seen.append(key)
            }
        }
        #expect(seen == ConfigurationKey.allCases)
    }
}

import Foundation
import TestSupport
import Testing

/// The man pages in `systemd/man/` (shipped in the package) say what `--help` and the configuration reference
/// say: a command, option or key added, removed or reworded on one side fails here until the other follows.
@Suite(.hangLimit) struct ManPageTests {
    private static func help(_ executable: String, _ arguments: [String] = ["--help"]) throws -> String {
        let outcome = try CLI.run(arguments, executable: executable)
        try #require(outcome.status == 0, "\(executable) \(arguments): \(outcome)")
        return outcome.stdout
    }

    /// The man page's entries as (term, first paragraph) pairs, to compare with a `--help` list.
    private static func listing(_ entries: [ManPage.Entry]) -> [HelpListing.Entry] {
        entries.map { HelpListing.Entry(term: $0.tag, text: $0.paragraphs.first ?? "") }
    }

    @Test func pwflagsPageListsTheCommandsOfTheHelpInItsWords() throws {
        let help = HelpListing(try Self.help("pwflags"), heading: "Commands:")
        let page = try ManPage("pwflags.1").entries(under: ".SH COMMANDS")
        #expect(help.entries.count > 10)
        #expect(Self.listing(page) == help.entries)
    }

    @Test func pwflagsPageHoldsEachCommandsOwnHelp() throws {
        let page = try ManPage("pwflags.1").entries(under: ".SH COMMANDS")
        try #require(!page.isEmpty)
        for entry in page {
            let command = String(entry.tag.prefix { $0 != " " })
            let own = try Self.help("pwflags", [command, "--help"])
            let body = own.split(separator: "\n").filter { !$0.hasPrefix("Usage:") }.joined(separator: " ")
            #expect(
                entry.paragraphs.dropFirst().joined(separator: " ") == ManPage.collapse(body),
                "pwflags \(command) --help")
        }
    }

    @Test func pwflagsPageListsTheOptionsAndExitStatusOfTheHelp() throws {
        let text = try Self.help("pwflags")
        let page = try ManPage("pwflags.1")
        #expect(Self.listing(page.entries(under: ".SH OPTIONS")) == HelpListing(text, heading: "Options:").entries)
        let exit = try #require(text.split(separator: "\n").first { $0.hasPrefix("Exit status: ") })
        #expect(page.plainText.contains(ManPage.collapse(String(exit.dropFirst("Exit status: ".count)))))
    }

    @Test func pwflagsdPageListsTheOptionsOfTheHelp() throws {
        let text = try Self.help("pwflagsd")
        let page = try ManPage("pwflagsd.8")
        let help = HelpListing(text, heading: "Options:")
        #expect(help.entries.count >= 7)
        #expect(Self.listing(page.entries(under: ".SH OPTIONS")) == help.entries)
        for line in text.split(separator: "\n")
        where !line.hasPrefix(" ") && !line.hasSuffix(":") && !line.hasPrefix("Usage:") {
            #expect(page.plainText.contains(ManPage.collapse(String(line))), "pwflagsd --help: \(line)")
        }
    }

    /// Each `# comment` + `#Key=default` pair of `config/pwflagsd.conf`, section by section, is an entry
    /// `Key=default` with the comment as its first paragraph, under `.SS [Section]`.
    @Test func configurationPageListsEveryKeyOfTheReferenceWithItsDefaultAndMeaning() throws {
        let reference = try String(
            contentsOf: Repository.root.appendingPathComponent("config/pwflagsd.conf"), encoding: .utf8)
        let page = try ManPage("pwflagsd.conf.5")
        var sections: [(String, [HelpListing.Entry])] = []
        var comment = ""
        for line in reference.split(separator: "\n").map(String.init) {
            if line.hasPrefix("[") {
                sections.append((line, []))
            } else if line.hasPrefix("# ") {
                comment = String(line.dropFirst(2))
            } else if line.hasPrefix("#"), line.contains("="), !sections.isEmpty {
                sections[sections.count - 1].1.append(HelpListing.Entry(term: String(line.dropFirst()), text: comment))
            }
        }
        #expect(
            sections.map(\.0) == [
                "[Pushwoosh]", "[FeatureFlags]", "[Daemon]", "[OFREP]", "[DBus]", "[Varlink]", "[Telemetry]",
            ])
        for (section, keys) in sections {
            #expect(Self.listing(page.entries(under: ".SS \(section)")) == keys, "\(section)")
        }
        let documented = page.source.split(separator: "\n").filter { $0.hasPrefix(".SS [") }.map {
            String($0.dropFirst(4))
        }
        #expect(documented == sections.map(\.0))
    }

    @Test(arguments: ["pwflags.1", "pwflagsd.8", "pwflagsd.conf.5"])
    func pageRendersWithoutWarnings(name: String) throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/groff"),
            "groff is missing: apt-get install groff-base")
        let outcome = try Command.run(
            "/usr/bin/groff", ["-ww", "-man", "-Tutf8", "-z", ManPage.path(name)], check: false)
        #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome)")
    }
}

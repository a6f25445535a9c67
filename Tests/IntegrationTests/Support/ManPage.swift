import Foundation
import TestSupport

/// A man page of `systemd/man/`, read as the list entries (`.TP`) its sections hold, in plain text.
///
/// Only what the pages use is understood: `.SH`/`.SS` headings, `.TP` entries whose next line is the tag, and
/// `.IP` paragraphs continuing an entry. Inline font changes and escapes are removed, white space is collapsed,
/// so that an entry compares equal to the `--help` line it documents.
struct ManPage {
    /// One `.TP` entry: its tag and its paragraphs (the text under the tag, then each `.IP`).
    struct Entry: Equatable, CustomStringConvertible {
        var tag: String
        var paragraphs: [String]

        var description: String { "\(tag) => \(paragraphs)" }
    }

    /// The page's troff source.
    let source: String

    /// Reads `systemd/man/NAME`.
    init(_ name: String) throws {
        let url = Repository.root.appendingPathComponent("systemd/man/\(name)")
        source = try String(contentsOf: url, encoding: .utf8)
    }

    /// The path of the page's file.
    static func path(_ name: String) -> String { Repository.path("systemd/man/\(name)") }

    /// The entries of the section or subsection whose heading line is `heading` (such as `.SH OPTIONS`).
    func entries(under heading: String) -> [Entry] {
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: heading) else { return [] }
        let level = heading.hasPrefix(".SS") ? [".SH", ".SS"] : [".SH"]
        var entries: [Entry] = []
        var index = start + 1
        var expectingTag = false
        while index < lines.count {
            let line = lines[index]
            index += 1
            if level.contains(where: { line.hasPrefix($0 + " ") }) { break }
            if line == ".TP" {
                expectingTag = true
            } else if expectingTag {
                entries.append(Entry(tag: Self.plain(line), paragraphs: [""]))
                expectingTag = false
            } else if line == ".IP" {
                if !entries.isEmpty { entries[entries.count - 1].paragraphs.append("") }
            } else if line.hasPrefix(".") {
                // .PP, .nf and the like end the entry's text.
                if !entries.isEmpty, line == ".PP" { entries[entries.count - 1].paragraphs.append("") }
            } else if !entries.isEmpty {
                let last = entries.count - 1
                let text = entries[last].paragraphs.removeLast()
                entries[last].paragraphs.append(Self.collapse(text + " " + Self.plain(line)))
            }
        }
        return entries.map { Entry(tag: $0.tag, paragraphs: $0.paragraphs.filter { !$0.isEmpty }) }
    }

    /// Every text line of the page (macros left out), in plain text and collapsed into one string.
    var plainText: String {
        let lines = source.split(separator: "\n").filter { !$0.hasPrefix(".") }
        return Self.collapse(lines.map { Self.plain(String($0)) }.joined(separator: " "))
    }

    /// A troff text line without its font changes and escapes.
    static func plain(_ line: String) -> String {
        var text = line
        for font in ["\\fB", "\\fI", "\\fR", "\\fP", "\\&"] { text = text.replacingOccurrences(of: font, with: "") }
        text = text.replacingOccurrences(of: "\\-", with: "-").replacingOccurrences(of: "\\(aq", with: "'")
        text = text.replacingOccurrences(of: "\\e", with: "\\")
        return collapse(text)
    }

    /// Runs of white space made single spaces, the ends trimmed.
    static func collapse(_ text: String) -> String {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).joined(separator: " ")
    }
}

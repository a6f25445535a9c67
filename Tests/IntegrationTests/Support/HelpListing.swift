import Foundation

/// The two-column lists of a `--help` text (`Commands:`, `Options:`), read as (term, description) pairs.
///
/// An entry starts on a line indented by two spaces; the description follows two or more spaces, or starts on
/// the next, deeper indented line; deeper indented lines continue it.
struct HelpListing: Equatable, CustomStringConvertible {
    struct Entry: Equatable, CustomStringConvertible {
        var term: String
        var text: String

        var description: String { "\(term) => \(text)" }
    }

    var entries: [Entry]

    var description: String { entries.map(\.description).joined(separator: "\n") }

    /// The list under the line `heading` (such as `Options:`) in `help`, up to the next blank line.
    init(_ help: String, heading: String) {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        entries = []
        guard let start = lines.firstIndex(of: heading) else { return }
        for line in lines[(start + 1)...] {
            if line.trimmingCharacters(in: .whitespaces).isEmpty { break }
            let isTerm = line.hasPrefix("  ") && !line.hasPrefix("   ")
            if isTerm {
                let body = line.dropFirst(2)
                if let gap = body.range(of: "  ") {
                    entries.append(
                        Entry(
                            term: ManPage.collapse(String(body[..<gap.lowerBound])),
                            text: ManPage.collapse(String(body[gap.upperBound...]))))
                } else {
                    entries.append(Entry(term: ManPage.collapse(String(body)), text: ""))
                }
            } else if !entries.isEmpty {
                entries[entries.count - 1].text = ManPage.collapse(entries[entries.count - 1].text + " " + line)
            }
        }
    }
}

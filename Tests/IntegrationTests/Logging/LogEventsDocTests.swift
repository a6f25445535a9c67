import Foundation
import TestSupport
import Testing

/// docs/operations.md's "Log events" table lists every `PWFLAGS_EVENT` value the daemon logs, and nothing it
/// does not: an operator queries the journal by these names.
@Suite(.hangLimit) struct LogEventsDocTests {
    /// Every `"PWFLAGS_EVENT": "NAME"` in the daemon's sources.
    static func logged() throws -> Set<String> {
        let root = Repository.path("Sources/FlagsDaemon")
        let files = try #require(FileManager.default.subpaths(atPath: root)).filter { $0.hasSuffix(".swift") }
        var names: Set<String> = []
        let marker = #""PWFLAGS_EVENT": ""#
        for file in files {
            let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
            var rest = text[...]
            while let start = rest.range(of: marker) {
                rest = rest[start.upperBound...]
                names.insert(String(rest.prefix { $0 != "\"" }))
            }
        }
        return names
    }

    /// The first column of the rows of the table under `### Log events`, below its header.
    static func documented() throws -> Set<String> {
        let page = try String(contentsOfFile: Repository.path("docs/operations.md"), encoding: .utf8)
        let section = try #require(page.range(of: "### Log events"), "docs/operations.md has no Log events section")
        var names: Set<String> = []
        var inRows = false
        for line in page[section.upperBound...].split(separator: "\n") {
            if line.hasPrefix("#") { break }
            if line.hasPrefix("| ---") { inRows = true }
            guard inRows, line.hasPrefix("| `") else { continue }
            names.insert(String(line.dropFirst(3).prefix { $0 != "`" }))
        }
        return names
    }

    @Test func everyEventTheDaemonLogsIsDocumentedAndNoOther() throws {
        let logged = try Self.logged()
        let documented = try Self.documented()
        #expect(logged.count >= 15, "the scan found too few events: \(logged.sorted())")
        let undocumented = logged.subtracting(documented).sorted()
        let unused = documented.subtracting(logged).sorted()
        #expect(undocumented.isEmpty, "logged, not in docs/operations.md: \(undocumented)")
        #expect(unused.isEmpty, "documented, never logged: \(unused)")
    }
}

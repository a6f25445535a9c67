import Foundation
import TestSupport
import Testing

/// What a system library promises its programs: the SONAME, libc only, the size, only the API exported (and
/// each with its man page), and the Debian symbols file that `dpkg-shlibdeps` relies on.
@Suite(.hangLimit) struct CLibraryABITests {
    static func output(_ line: String) throws -> String {
        try Command.run("/bin/sh", ["-c", line], timeout: .seconds(120)).stdout
    }

    static var exported: [String] {
        get throws {
            let library = try CLibrary.build()
            return try output("nm -D --defined-only '\(library.sharedObject)' | awk '$2 == \"T\" { print $3 }'")
                .split(separator: "\n").map { String($0.prefix { $0 != "@" }) }.sorted()
        }
    }

    @Test("libpwflags.so.0: its SONAME, libc alone, at most 1 MiB stripped, only the version script's symbols")
    func sharedObject() throws {
        let library = try CLibrary.build()
        let dynamic = try Self.output("readelf -d '\(library.sharedObject)'")
        #expect(dynamic.contains("Library soname: [libpwflags.so.0]"))
        let needed = dynamic.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.count == 1 && needed[0].contains("[libc.so.6]"), "\(needed)")
        let size = try Self.output(
            "cp '\(library.sharedObject)' '\(library.prefix)/stripped.so' && strip '\(library.prefix)/stripped.so' && "
                + "stat -c %s '\(library.prefix)/stripped.so'")
        #expect((Int(size.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .max) <= 1 << 20)
        let map = try String(contentsOfFile: CLibrary.source + "/libpwflags.map", encoding: .utf8)
        let listed = map.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("pwflags_") }.map { String($0.dropLast()) }.sorted()
        #expect(try Self.exported == listed)
        let header = try String(contentsOfFile: CLibrary.source + "/include/pwflags.h", encoding: .utf8)
        for symbol in listed {
            let declared = header.contains("\(symbol)(")
            #expect(declared, "\(symbol) is not declared in pwflags.h")
        }
    }

    @Test("The Debian symbols file lists exactly the exported symbols (dpkg-gensymbols -c4)")
    func symbolsFile() throws {
        let library = try CLibrary.build()
        let directory = try TemporaryDirectory(prefix: "pwsym")
        defer { directory.remove() }
        try Command.run(
            "/bin/sh",
            [
                "-c",
                "cd '\(directory.path)' && dpkg-gensymbols -v0.1.0 -plibpwflags0 -e'\(library.sharedObject)' "
                    + "-I'\(CLibrary.source)/debian/libpwflags0.symbols' -O'\(directory.path)/out' -c4",
            ])
    }

    @Test("Every exported function has a section 3 man page that renders cleanly and states the error convention")
    func manPages() throws {
        let pages = CLibrary.source + "/man"
        for symbol in try Self.exported + ["pwflags"] {
            let path = "\(pages)/\(symbol).3"
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let page = text.hasPrefix(".so man3/") ? "\(pages)/\(text.dropFirst(9).prefix { $0 != "\n" })" : path
            let body = try String(contentsOfFile: page, encoding: .utf8)
            #expect(body.contains(".SH \"ERROR CONVENTION\""), "\(symbol)")
            #expect(body.contains("negative errno"), "\(symbol)")
            if page == path, symbol != "pwflags" { #expect(body.contains("\(symbol)("), "\(symbol) not in its page") }
            let rendered = try Command.run("/bin/sh", ["-c", "groff -man -Tutf8 -ww -z '\(page)' 2>&1"]).stdout
            #expect(rendered.isEmpty, "\(page): \(rendered)")
        }
    }
}

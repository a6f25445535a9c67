import Foundation
import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// `ChildProcess.run`: how the child ended, and the signal state it starts with.
@Suite(.hangLimit) struct ChildProcessTests {
    @Test("An exit status and a killing signal come back as such")
    func reportsHowTheChildEnded() throws {
        #expect(try ChildProcess.run(["/bin/sh", "-c", "exit 7"], environment: []) == .exited(7))
        #expect(try ChildProcess.run(["/bin/sh", "-c", "exit 0"], environment: []) == .exited(0))
        #expect(try ChildProcess.run(["/bin/sh", "-c", "kill -TERM $$"], environment: []) == .signalled(SIGTERM))
        #expect(throws: SystemError.self) { try ChildProcess.run(["/nonexistent/program"], environment: []) }
    }

    @Test("The child gets the environment it is given, and SIGPIPE at its default though the parent ignores it")
    func childStartsWithDefaultSignals() throws {
        signal(SIGPIPE, SIG_IGN)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("status")
        let ended = try ChildProcess.run(
            ["/bin/sh", "-c", #"echo "$GREETING" > "$OUT"; grep -E '^Sig(Ign|Blk):' /proc/self/status >> "$OUT""#],
            environment: ["OUT=\(file)", "GREETING=hello"])
        #expect(ended == .exited(0))
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        try #require(lines.count == 3, "\(lines)")
        #expect(lines[0] == "hello")
        for line in lines.dropFirst() {
            let mask = try #require(UInt64(line.split(separator: "\t").last ?? "", radix: 16), "\(line)")
            #expect(mask & (1 << (UInt64(SIGPIPE) - 1)) == 0, "\(line)")
        }
    }
}

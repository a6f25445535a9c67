import Foundation
import PWFlagsTestKit
import UnixIO

/// libpwflags, the C library, beside the Swift library in the same run: a read from C, a change reaching 1,000
/// C clients, and how much a C program's RSS grows when it loads the library and opens a client.
///
/// The library and its two bench programs (`Sources/libpwflags/bench`) are built with the library's own script
/// into the bench's directory, with the system's `cc`.
enum CLibraryBenchmark {
    static let section = "C library (libpwflags)"
    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("libpwflags").path

    static func run(bench: Benchmark, socketPath: String, extent: Extent, report: Report, directory: TemporaryDirectory)
        throws
    {
        let prefix = directory.file("libpwflags")
        let lib = prefix + "/lib"
        let built = shell(
            "'\(source)/build.sh' '\(prefix)' >/dev/null && cc -O2 -I'\(prefix)/include' '\(source)/bench/cbench.c' "
                + "-o '\(prefix)/cbench' -L'\(lib)' -lpwflags -Wl,-rpath,'\(lib)' && cc -O2 -I'\(prefix)/include' "
                + "'\(source)/bench/crss.c' -o '\(prefix)/crss' -ldl")
        guard built != nil else {
            report.add(section, "get + one property, single thread", .nan, "ns", target: "≤ 100", met: false)
            return
        }
        let reads = extent.pick(full: 10_000_000, quick: 2_000_000, smoke: 20_000)
        let read = shell("'\(prefix)/cbench' read '\(socketPath)' \(reads)").flatMap { value(after: "read_ns", in: $0) }
        report.add(
            section, "get + one property, single thread", read ?? .nan, "ns", target: "≤ 100",
            met: (read ?? .infinity) <= 100)
        let rss = shell("'\(prefix)/crss' '\(lib)/libpwflags.so.0' '\(socketPath)'").flatMap {
            value(after: "rss_kib", in: $0)
        }
        report.add(section, "RSS growth: load the library, open a client", rss ?? .nan, "KiB")
        try fanOut(bench: bench, program: prefix + "/cbench", clients: 1_000, report: report)
    }

    /// From a flags-file change to the last of `clients` C clients (in one process, one epoll loop) hearing it.
    private static func fanOut(bench: Benchmark, program: String, clients: Int, report: Report) throws {
        let daemon = try bench.localDaemon(flags: 100, name: "cfanout")
        defer { daemon.cleanUp() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["fanout", daemon.socketPath, "\(clients)"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        let reader = LineReader(fd: output.fileHandleForReading.fileDescriptor)
        guard reader.readLine(timeout: .seconds(120)) == "ready" else {
            report.add(section, "a change reaching \(clients) C clients", .nan, "ms")
            return
        }
        let start = MonotonicClock.nanoseconds()
        try daemon.directory.write("flags.json", Measure.flagsFile(Measure.flags(100, variant: 1)))
        guard let line = reader.readLine(timeout: .seconds(120)), let heard = value(after: "heard", in: line) else {
            report.add(section, "a change reaching \(clients) C clients", .nan, "ms")
            return
        }
        report.add(section, "a change reaching \(clients) C clients", (heard - Double(start)) / 1e6, "ms")
    }

    /// The number after `name ` in `text`.
    private static func value(after name: String, in text: String) -> Double? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard let index = words.firstIndex(of: Substring(name)), words.indices.contains(index + 1) else { return nil }
        return Double(words[index + 1])
    }

    /// Runs `/bin/sh -c line`; its stdout, or nil when it failed.
    private static func shell(_ line: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", line]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }
}

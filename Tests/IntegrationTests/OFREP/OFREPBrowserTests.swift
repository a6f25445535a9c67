import FlagsCore
import Foundation
import TestSupport
import Testing

/// The kiosk example (`examples/kiosk/index.html`) in a real headless Chromium against the real daemon: a page from
/// an allowed origin reads a flag with the token, follows the event stream, re-fetches (304 while nothing changed,
/// 200 with a new ETag after the flags file changed) and shows the new value within 2 s; a page from another origin
/// cannot read. Fails, never skips, without chromium, chromedriver or the venv (CI's setup installs them).
@Suite(.hangLimit) struct OFREPBrowserTests {
    @Test func aKioskPageReadsAFlagAndShowsItsChangeWithin2Seconds() throws {
        for path in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
            #expect(
                FileManager.default.isExecutableFile(atPath: path),
                "\(path) is missing: apt-get install chromium chromium-driver")
        }
        try BrowserVenv.prepare()
        let script = Repository.root.appendingPathComponent("Tests/OpenFeature/kiosk_browser.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BrowserVenv.python)
        process.arguments = [script.path]
        let input = Pipe()
        let output = Pipe()
        let errors = try TemporaryDirectory(prefix: "pwkiosk")
        defer { errors.remove() }
        try errors.write("stderr", "")
        process.standardInput = input
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors.file("stderr")))
        try process.run()
        // A browser that hangs ends the test, not the run.
        let watchdog = DispatchWorkItem { [process] in if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
        defer {
            watchdog.cancel()
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        var reader = LineSplitter(output.fileHandleForReading)
        let first = reader.next()
        let origins = try JSONValue(parsing: Array(try #require(first, "no origins").utf8))
        let allowed = try #require(origins["allowed"]?.stringValue)
        let rig = try OFREPRig(tcp: true, extra: "AllowedOrigins=\(allowed)\n")
        defer { rig.cleanUp() }
        let setup: JSONValue = [
            "base": .string("http://127.0.0.1:\(try #require(rig.port))"), "token": .string(OFREPRig.token),
            "flag": "new_checkout.button_color", "flagsFile": .string(rig.daemon.flagsPath),
            "newFlags": .string(LocalFlags.text(OFREPEventStreamTests.changed)), "old": "\"green\"", "new": "\"red\"",
        ]
        var line: [UInt8] = []
        setup.write(to: &line)
        input.fileHandleForWriting.write(Data(line + [0x0A]))
        var last = ""
        while let next = reader.next() { last = next }
        process.waitUntilExit()
        let stderr = (try? String(contentsOfFile: errors.file("stderr"), encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "results: \(last)\nstderr: \(stderr.suffix(3000))")
        let results = try JSONValue(parsing: Array(last.utf8))
        for (name, value) in results["checks"]?.objectValue ?? [:] {
            #expect(value == true, "\(name): \(value)")
        }
        #expect(results["checks"]?.objectValue?.count == 6, "\(results)")
        #expect((results["secondsToNewValue"]?.numberValue ?? 99) <= 2, "\(results)")
        #expect(results["ok"] == true)
        print("OFREPBrowserTests: \(last)")
        // The page's stream URL, holding the channel, never reached the log.
        #expect(!rig.daemon.log.contains("channel="))
    }
}

/// Lines from a pipe, read as they come.
private struct LineSplitter {
    let handle: FileHandle
    var buffer = Data()

    init(_ handle: FileHandle) { self.handle = handle }

    mutating func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let chunk = handle.availableData
            guard !chunk.isEmpty else { return nil }
            buffer.append(chunk)
        }
    }
}

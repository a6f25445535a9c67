import FlagsCore
import Foundation
import Synchronization
import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Overrides are bounded in bytes, a change costs what it changes, and the overrides file is read like every
/// other file: bounded, regular files only, a log line for what is refused.
@Suite(.hangLimit) struct OverrideBoundsTests {
    static func large(_ index: Int) -> JSONValue {
        ["key": .string("large_\(index)"), "properties": ["blob": .string(String(repeating: "x", count: 60_000))]]
    }

    @Test func overridesStopAtTheirByteBoundAndReadersNeverWaitOnAChange() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let path = daemon.socketPath
        let writer = try SocketSession(socketPath: daemon.socketPath)
        let done = Atomic(false)
        let slowest = Locked(Duration.zero)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { finished.signal() }
            guard let reader = try? SocketSession(socketPath: path) else { return }
            let clock = ContinuousClock()
            while !done.load(ordering: .relaxed) {
                let started = clock.now
                _ = try? reader.get("new_checkout")
                let took = clock.now - started
                slowest.withLock { $0 = max($0, took) }
            }
        }
        thread.start()
        var accepted = 0
        var refusal: JSONValue?
        for index in 0..<60 {
            let answer = try #require(try writer.call("setOverride", Self.large(index)))
            if let error = answer["error"] {
                refusal = error
                break
            }
            accepted += 1
        }
        done.store(true, ordering: .relaxed)
        #expect((30...35).contains(accepted), "accepted \(accepted)")
        #expect(refusal?["code"] == -32602)
        #expect(refusal?["message"]?.stringValue?.contains("2097152 bytes") == true, "\(String(describing: refusal))")
        var info = stat()
        #expect(stat(daemon.directory.file("state/overrides.json"), &info) == 0)
        #expect(Int(info.st_size) <= 2 << 20)
        // A small override still fits after one large one is cleared.
        #expect(try writer.result("clearOverride", ["key": "large_0"]) == ["cleared": ["large_0"]])
        #expect(try writer.call("setOverride", Self.large(99))?["error"] == nil)
        // The reader's last `get` is counted once its loop has ended.
        #expect(finished.wait(timeout: .now() + 10) == .success, "the reader never ended")
        let worst = slowest.withLock { $0 }
        #expect(worst < .milliseconds(150), "a get waited \(worst)")
    }

    @Test(arguments: ["fifo", "zero", "huge"])
    func anOverridesFileThatIsNoRegularFileOrTooLargeIsRefusedWithALogLine(kind: String) throws {
        let first = try DaemonProcess.serving(Fixtures.all)
        #expect(first.stop() == 0)
        let path = first.directory.file("state/overrides.json")
        switch kind {
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        case "zero": #expect(symlink("/dev/zero", path) == 0)
        default:
            // Valid JSON, larger than the bound: never parsed.
            var text = #"{"overrides":[{"key":"dark_mode","enabled":true,"properties":{"pad":""#
            text += String(repeating: "p", count: 3 << 20) + #""}}]}"#
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        }
        let second = try DaemonProcess(config: LocalFlags.config(in: first.directory), directory: first.directory)
        defer { second.cleanUp() }
        let session = try SocketSession(socketPath: second.socketPath)
        #expect(try session.get("dark_mode")?["source"] == "file")
        #expect(try session.result("listOverrides") == ["overrides": []])
        #expect(second.log.contains("ignored the overrides file"), "\(second.log)")
    }
}

import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The protocol fuzzer's inputs sent to the real daemon over its socket: it must neither crash nor stop answering.
@Suite(.hangLimit(fuzzingFor: "PWFLAGS_SOCKET_FUZZ_SECONDS")) struct SocketFuzzTests {
    /// Seconds of fuzzing: `PWFLAGS_SOCKET_FUZZ_SECONDS`, else 3.
    static var duration: Duration {
        let seconds = ProcessInfo.processInfo.environment["PWFLAGS_SOCKET_FUZZ_SECONDS"].flatMap(Double.init) ?? 3
        return .milliseconds(Int(seconds * 1000))
    }

    @Test func randomLinesNeitherCrashNorWedgeTheDaemon() throws {
        // A small line limit, so that over-long lines (and the closes they cause) are common too.
        let daemon = try DaemonProcess.serving(Fixtures.all, extra: "[Daemon]\nMaxLineBytes=2048\n")
        defer { daemon.cleanUp() }
        let seed = ProcessInfo.processInfo.environment["PWFLAGS_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x50C4_E7
        var mutator = FuzzMutator(seed: seed, corpus: FuzzCorpus.seeds())
        let sync = Array(#"{"id":"sync-41c7","method":"status"}"#.utf8) + [10]
        var client = try daemon.connect()
        var lines = 0
        var connections = 1
        var answers = 0
        // What this connection was sent, saved when the daemon stops answering it.
        var transcript: [UInt8] = []
        let deadline = ContinuousClock.now + Self.duration
        while ContinuousClock.now < deadline {
            var batch: [UInt8] = []
            for _ in 0..<32 {
                batch += mutator.next()
                batch.append(10)
                lines += 1
            }
            // After the batch, a request whose answer shows that the daemon read everything before it.
            // Inputs may call reload, which notifies systemd; the fake notify socket reads continuously, as
            // systemd does, so it never fills up.
            let sent = (try? client.send(batch + sync)) != nil
            transcript += batch + sync
            let waitStarted = ContinuousClock.now
            var synced = false
            while sent, let line = client.readLine(timeout: .seconds(10)) {
                answers += 1
                if line.contains("sync-41c7") {
                    synced = true
                    break
                }
            }
            if !synced {
                // Closed (a line over the limit) is fine; silence on an open connection is not.
                if ContinuousClock.now - waitStarted >= .seconds(9) {
                    let path = NSTemporaryDirectory() + "pwflags-socket-fuzz-\(seed)-\(lines)"
                    _ = FileManager.default.createFile(atPath: path, contents: Data(transcript))
                    Issue.record(
                        "the daemon stopped answering after the transcript saved to \(path); log:\n\(daemon.log)")
                }
                #expect(daemon.isRunning, "pwflagsd exited after seed \(seed), line \(lines); log:\n\(daemon.log)")
                guard daemon.isRunning else { return }
                client = try daemon.connect()
                transcript = []
                connections += 1
            }
        }
        print("socket fuzz: \(lines) lines, \(answers) answer lines, \(connections) connections, seed \(seed)")
        #expect(daemon.isRunning, "log:\n\(daemon.log)")
        // Inputs may set local overrides: clear them, then the file's flag must read as it was.
        _ = try daemon.connect().call("clearOverride", ["all": true], id: "clear")
        let response = try daemon.connect().call("get", ["key": "new_checkout"], id: "check")
        #expect(response?["result"]?["flag"] == Fixtures.wireValue(Fixtures.newCheckout))
        #expect(!daemon.log.contains("internal error"), "log:\n\(daemon.log)")
    }
}

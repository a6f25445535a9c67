import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `kill -9` at random moments around cache writes: every restart finds the old cache or the new one.
@Suite(.hangLimit) struct CrashSafetyTests {
    /// `PWFLAGS_CRASH_KILLS` (default 200): how many daemons are killed.
    static var kills: Int {
        ProcessInfo.processInfo.environment["PWFLAGS_CRASH_KILLS"].flatMap(Int.init) ?? 200
    }

    /// Flags besides `gen` in each generation, so that a write takes a little while.
    static let fillerCount = 50

    /// Generation `n`: the flag `gen` with property `n`, and filler flags so that a write takes a little while.
    static func generation(_ n: Int) -> [Flag] {
        let gen = Flag(key: "gen", isEnabled: true, ruleId: "r_gen", properties: ["n": .number(Double(n))])
        let filler = (0..<Self.fillerCount).map { index in
            Flag(
                key: "filler_\(index)", isEnabled: index % 2 == 0, ruleId: "r_\(n)_\(index)",
                properties: ["text": .string(String(repeating: "x", count: 100)), "n": .number(Double(n))])
        }
        return [gen] + filler
    }

    /// The temporary files of atomic writes in `directory`.
    static func temporaries(in directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix(".") && $0.contains(".tmp.") }
    }

    /// How long a daemon takes from a request's arrival at the server to the refresh answer (decoding and the
    /// cache write), in microseconds: the longest of three runs.
    static func answerMicroseconds(server: FakePushwooshServer) async throws -> UInt32 {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        server.setDefaultReply(.flags(generation(0)), for: "getFeatureFlags")
        var longest = Duration.zero
        for _ in 0..<3 {
            let before = server.requests.count
            let daemon = try Fixtures.daemon(server, featureFlags: ["DisableThrottle": "yes"], directory: directory)
            defer { daemon.stop() }
            let client = try RawClient(socketPath: daemon.socketPath)
            try client.send(line: #"{"jsonrpc":"2.0","id":1,"method":"refresh"}"#)
            _ = try await server.waitForRequests(count: before + 1)
            let arrived = ContinuousClock.now
            _ = client.readLine(timeout: .seconds(10))
            longest = max(longest, ContinuousClock.now - arrived)
        }
        return UInt32(
            clamping: longest.components.attoseconds / 1_000_000_000_000 + longest.components.seconds * 1_000_000)
    }

    @Test(
        "kill -9 at random moments before and after cache writes end: a restart reads the old or the new cache, never a broken one"
    )
    func killAroundCacheWrites() async throws {
        let server = try PushwooshRig.server()
        let directory = try TemporaryDirectory()
        defer {
            server.stop()
            directory.remove()
        }
        let state = directory.file("state")
        let cachePath = state + "/flags-cache.json"
        var stored: Int?
        var outcomes = (unchanged: 0, new: 0, leftoverTemporaries: 0, restarts: 0)
        // Seeded, so that a failing run's delays can be replayed (PWFLAGS_CRASH_SEED=<the printed seed>).
        let seed =
            ProcessInfo.processInfo.environment["PWFLAGS_CRASH_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        let window = try await Self.answerMicroseconds(server: server) + 5000
        let clock = ContinuousClock()
        let started = clock.now
        for n in 1...Self.kills {
            server.setDefaultReply(.flags(Self.generation(n)), for: "getFeatureFlags")
            let requestsBefore = server.requests.count
            let daemon = try Fixtures.daemon(server, featureFlags: ["DisableThrottle": "yes"], directory: directory)
            #expect(!daemon.log.contains("corrupt"), "kill \(n): \(daemon.log)")
            // A temporary left by an earlier killed daemon is gone once the next one started.
            let pid = daemon.process.processIdentifier
            let stale = Self.temporaries(in: state).filter { !$0.hasSuffix(".tmp.\(pid)") }
            #expect(stale.isEmpty, "kill \(n): stale temporaries \(stale)")
            let client = try RawClient(socketPath: daemon.socketPath)
            try client.send(line: #"{"jsonrpc":"2.0","id":1,"method":"refresh"}"#)
            // The session start's request, which the refresh shares, reached the server; the random delay spans
            // the time its answer takes to be decoded and written, and 5 ms more: kills land before, during and
            // after the write.
            _ = try await server.waitForRequests(count: requestsBefore + 1)
            usleep(UInt32.random(in: 0...window, using: &generator))
            daemon.signal(SIGKILL)
            _ = daemon.waitForExit(timeout: .seconds(10))
            daemon.stop(expecting: .signal(SIGKILL))

            let cache: CacheFile?
            do {
                cache = try CacheFile.read(cachePath)
            } catch {
                Issue.record("kill \(n): the cache does not decode: \(error)")
                break
            }
            if let cache {
                let generation = try #require(cache.generation, "kill \(n): no gen flag")
                #expect(
                    generation == n || generation == stored,
                    "kill \(n): generation \(generation), before \(stored ?? -1)")
                #expect(cache.flags.count == Self.fillerCount + 1)
                if generation == stored { outcomes.unchanged += 1 } else { outcomes.new += 1 }
                stored = generation
            } else {
                #expect(stored == nil, "kill \(n): the cache vanished")
                outcomes.unchanged += 1
            }
            if !Self.temporaries(in: state).isEmpty { outcomes.leftoverTemporaries += 1 }

            if n % 20 == 0 {
                // A full restart with a server that never answers: only the cache can be served.
                outcomes.restarts += 1
                server.setDefaultReply(.hang, for: "getFeatureFlags")
                let check = try Fixtures.daemon(server, directory: directory)
                defer { check.stop() }
                #expect(!check.log.contains("corrupt"), "restart after kill \(n): \(check.log)")
                let session = try SocketSession(socketPath: check.socketPath)
                let gen = try session.get("gen")
                if let stored {
                    #expect(gen?["properties"]?["n"]?.integerValue == stored, "restart after kill \(n)")
                    #expect(try session.keys().count == Self.fillerCount + 1)
                } else {
                    #expect(gen?.isNull == true)
                }
            }
        }
        let summary =
            "crash safety (seed \(seed)): \(Self.kills) kills (delays 0-\(window) µs) in \(clock.now - started): \(outcomes.new) left the new cache,"
            + " \(outcomes.unchanged) the previous one, \(outcomes.leftoverTemporaries) left a temporary file,"
            + " \(outcomes.restarts) full restarts served the cache"
        print(summary)
        // The kills straddled the writes: some landed before a write was renamed into place (the previous cache
        // stayed) and some after (the new one); otherwise the run proved nothing about kills around a write. How
        // many landed inside one (a temporary left behind) is printed, not asserted: under load the delay window
        // grows to a second and a run of 200 may have none (seen: 197 new, 3 previous, 0 temporaries).
        #expect(outcomes.unchanged > 0, "no kill landed before a write ended: \(summary)")
        #expect(outcomes.new > 0, "no kill landed after a write: \(summary)")
        #expect(outcomes.restarts == Self.kills / 20, "\(summary)")
    }
}

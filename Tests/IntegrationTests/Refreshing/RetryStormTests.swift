import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Automatic retries against a server that keeps failing back off, one per window: the server never sees a storm.
@Suite(.hangLimit) struct RetryStormTests {
    /// `PWFLAGS_STORM_SECONDS` (default 6): how long to count. From 30 s on, the test uses RetryBackoff=1s and
    /// RefreshInterval=30s, the figures of a real device; below, 100ms and 1600ms, so that the suite stays short.
    static var seconds: Double {
        ProcessInfo.processInfo.environment["PWFLAGS_STORM_SECONDS"].flatMap(Double.init) ?? 6
    }

    @Test("Retries against an always-503 server grow from RetryBackoff to RefreshInterval, with jitter: no storm")
    func retriesBackOffAgainstAFailingServer() async throws {
        let seconds = Self.seconds
        let schedule =
            seconds >= 30 ? RetrySchedule(backoff: 1, interval: 30) : RetrySchedule(backoff: 0.1, interval: 1.6)
        let rig = try PushwooshRig.start(featureFlags: [
            "RetryBackoff": "\(Int(schedule.backoff * 1000))ms",
            "RefreshInterval": "\(Int(schedule.interval * 1000))ms",
        ]) {
            $0.setDefaultReply(.status(503, body: "busy"), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let clock = ContinuousClock()
        // The session start sends the first request; each later one is a retry.
        _ = try await server.waitForRequests(count: 1)
        var arrivals = [clock.now]
        let end = arrivals[0] + .milliseconds(Int(seconds * 1000))
        while clock.now < end {
            do {
                _ = try await server.waitForRequests(count: arrivals.count + 1, timeout: end - clock.now)
                arrivals.append(clock.now)
            } catch {
                break
            }
        }
        let count = server.requests.count
        let gaps = zip(arrivals.dropFirst(), arrivals).map { ($0 - $1).seconds }
        let expected = schedule.requestCount(within: seconds)
        print(
            "retry storm over \(seconds) s (RetryBackoff \(schedule.backoff) s, RefreshInterval \(schedule.interval) s):"
                + " \(count) requests, expected \(expected); gaps \(gaps.map { String(format: "%.3f", $0) })")
        #expect(expected.contains(count), "\(count) requests in \(seconds) s, expected \(expected)")
        for (index, arrival) in arrivals.dropFirst().enumerated() {
            let offset = (arrival - arrivals[0]).seconds
            #expect(schedule.window(index + 1).contains(offset), "retry \(index + 1) came \(offset) s after the first")
        }
        // The waits back off: the later half of the gaps is longer, on average, than the first few.
        if gaps.count >= 6 {
            let early = gaps.prefix(3).reduce(0, +) / 3
            let late = gaps.suffix(3).reduce(0, +) / 3
            #expect(late > early, "the gaps do not grow: \(gaps)")
        }
        // Nothing else was refreshed: the flags stay absent, and status says why.
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try session.result("status")?["lastError"]?["status"]?.integerValue == 503)
    }
}

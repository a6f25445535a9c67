import FlagsCore
import PushwooshAPI
import TestSupport
import Testing

@testable import FlagsDaemon

@Suite(.hangLimit) struct TelemetryExportTests {
    @Test("Protobuf's varints and fixed fields, byte for byte")
    func protobufWire() {
        var writer = ProtobufWriter()
        writer.uint(1, 150)
        writer.int(2, -1)
        writer.fixed64(3, 1)
        writer.string(4, "hi")
        #expect(
            writer.bytes == [
                0x08, 0x96, 0x01, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x19, 1, 0, 0, 0,
                0, 0, 0, 0, 0x22, 2, 0x68, 0x69,
            ])
    }

    @Test("The variables resolve as the SDKs read them, the key first, the per-signal addresses as given")
    func settingsResolve() throws {
        var configuration = Configuration()
        #expect(TelemetrySettings.resolve(configuration, environment: [:], instanceId: "i").settings == nil)
        let environment = [
            "OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel.example.net",
            "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "https://logs.example.net/ingest",
            "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20k, x-tenant = 42 ,broken",
            "OTEL_SERVICE_NAME": "kiosk-flags",
            "OTEL_RESOURCE_ATTRIBUTES": "service.instance.id=mine,site=7",
            "OTEL_METRIC_EXPORT_INTERVAL": "5000",
            "OTEL_BLRP_SCHEDULE_DELAY": "10",
            "OTEL_EXPORTER_OTLP_TIMEOUT": "soon",
        ]
        let resolved = TelemetrySettings.resolve(configuration, environment: environment, instanceId: "hwid")
        let settings = try #require(resolved.settings)
        #expect(settings.metrics.url == "https://otel.example.net/v1/metrics")
        #expect(settings.logs.url == "https://logs.example.net/ingest")
        #expect(settings.headers == ["authorization: Bearer k", "x-tenant: 42"])
        #expect(settings.resource.map(\.name) == ["service.name", "service.version", "service.instance.id", "site"])
        #expect(settings.resource.first?.value == "kiosk-flags")
        #expect(settings.resource.first { $0.name == "service.instance.id" }?.value == "mine")
        #expect(settings.metrics.interval == .seconds(5))
        #expect(settings.logs.interval == TelemetrySettings.minimumInterval)
        #expect(settings.timeout == .seconds(10))
        #expect(resolved.problems.count == 2, "\(resolved.problems)")
        #expect(!resolved.problems.joined().contains("Bearer"), "a header's value reached a problem")

        configuration.otlpEndpoint = "http://127.0.0.1:4318/"
        let keyed = try #require(
            TelemetrySettings.resolve(configuration, environment: environment, instanceId: "hwid").settings)
        #expect(keyed.metrics.url == "http://127.0.0.1:4318/v1/metrics")
        #expect(keyed.logs.url == "http://127.0.0.1:4318/v1/logs")
        let disabled = environment.merging(["OTEL_SDK_DISABLED": "true"]) { $1 }
        #expect(TelemetrySettings.resolve(configuration, environment: disabled, instanceId: "i").settings == nil)
        let insecure = ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel.example.net"]
        let refused = TelemetrySettings.resolve(Configuration(), environment: insecure, instanceId: "i")
        #expect(refused.settings == nil)
        #expect(refused.problems.count == 1)
    }

    @Test("Backoff doubles from a second to five minutes, each wait in the upper half; Retry-After is honoured")
    func backoff() {
        var backoff = ExportBackoff()
        var tops: [Duration] = []
        for _ in 0..<12 { tops.append(backoff.next(retryAfter: nil, random: 0.999_999)) }
        #expect(tops[0] < .seconds(1) && tops[0] > .milliseconds(999))
        #expect(tops[3] < .seconds(8) && tops[3] > .milliseconds(7999))
        #expect(tops.last.map { $0 <= .seconds(300) && $0 > .seconds(299) } == true)
        var low = ExportBackoff()
        #expect(low.next(retryAfter: nil, random: 0) == .milliseconds(500))
        #expect(low.next(retryAfter: nil, random: 0) == .seconds(1))
        var asked = ExportBackoff()
        #expect(asked.next(retryAfter: 30, random: 0) == .seconds(30))
        #expect(asked.next(retryAfter: 30, random: 0.5) == .seconds(31.5))
        #expect(asked.next(retryAfter: 86_400, random: 0) == .seconds(3600))
        asked.succeeded()
        #expect(asked.failures == 0)
    }

    @Test("A backoff ends when the other signal's export goes through again; the collector's Retry-After stands")
    func collectorReturns() {
        var waiting = ExportSchedule(due: 0)
        for _ in 0..<4 { waiting.failed(now: 100, retryAfter: nil, random: 0) }
        #expect(waiting.due == 104)
        waiting.collectorReturned(now: 101)
        #expect(waiting.due == 101, "the backoff's wait did not end")
        // Only the first success after failures says the collector is back.
        let first = waiting.sent(now: 102, interval: .seconds(60))
        let second = waiting.sent(now: 103, interval: .seconds(60))
        #expect(first && !second)
        // At its interval, not in a backoff: left alone.
        waiting.collectorReturned(now: 110)
        #expect(waiting.due == 163)
        // The collector said when this signal may come back: the other's success does not change it.
        var asked = ExportSchedule(due: 0)
        asked.failed(now: 100, retryAfter: 30, random: 0)
        asked.collectorReturned(now: 101)
        #expect(asked.due == 130)
        // A wait the backoff drew after the Retry-After is the backoff's again.
        asked.failed(now: 131, retryAfter: nil, random: 0)
        asked.collectorReturned(now: 132)
        #expect(asked.due == 132)
        // A refusal is an answer, not a failure: the next export at the interval, no backoff left.
        asked.refused(now: 133, interval: .seconds(60))
        #expect(!asked.isBackingOff)
        asked.collectorReturned(now: 134)
        #expect(asked.due == 193)
    }

    @Test("OTLP's retryable statuses are tried again, the rest refused; no answer is tried again")
    func outcomes() {
        let unavailable = PushwooshError.httpStatus(503, retryAfter: "7", body: [])
        #expect(TelemetryExporter.outcome(of: unavailable, now: 0) == .failed(reason: "HTTP 503", retryAfter: 7))
        let bad = PushwooshError.httpStatus(400, retryAfter: nil, body: [])
        #expect(TelemetryExporter.outcome(of: bad, now: 0) == .refused(reason: "HTTP 400"))
        let down = PushwooshError.noReply("refused", kind: .connect)
        #expect(
            TelemetryExporter.outcome(of: down, now: 0)
                == .failed(reason: "connect: no reply: refused", retryAfter: nil))
    }

    @Test("The tally counts, bounds and merges back what could not be sent")
    func tally() {
        let tally = EvaluationTally()
        let flag = Flag(key: "a", isEnabled: true, ruleId: "r1")
        tally.evaluated("a", flag: flag, revision: 1)
        #expect(tally.take().entries.isEmpty, "counted while off")
        tally.configure(enabled: true, limit: 2)
        for _ in 0..<3 { tally.evaluated("a", flag: flag, revision: 1) }
        tally.evaluated("b", flag: nil, revision: 1)
        tally.evaluated("c", flag: nil, revision: 1)
        tally.evaluated(String(repeating: "k", count: 300), flag: flag, revision: 1)
        let batch = tally.take()
        #expect(batch.entries.count == 2)
        let key = EvaluationTally.Key(flagKey: "a", variant: "r1", reason: "targeting_match", revision: 1)
        #expect(batch.entries[key]?.count == 3)
        #expect(tally.droppedTotal == 2)
        tally.evaluated("a", flag: flag, revision: 1)
        tally.markStale(true)
        tally.evaluated("a", flag: flag, revision: 1)
        tally.giveBack(batch)
        let merged = tally.take()
        #expect(merged.entries[key]?.count == 4)
        #expect(merged.entries.count == 2, "the stale read and one given back fit; the other given back is dropped")
        #expect(tally.droppedTotal == 3)
    }

    @Test("Reads count as stale from the status that says the flags are, not from the next export")
    func staleFromTheStatus() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (clock, fetcher, store, tally) = (ManualClock(), ScriptedFetcher(), FlagStore(), EvaluationTally())
        tally.configure(enabled: true, limit: 10)
        let flag = Flag(key: "a", isEnabled: true, ruleId: "r1")
        fetcher.answer(.success(FeatureFlagsResponse(flags: [flag])))
        var configuration = Configuration()
        configuration.applicationCode = "ABCDE-12345"
        configuration.refreshSpread = .zero
        configuration.sessionStartDelay = .zero
        let refresher = Refresher(
            provider: PushwooshProvider(
                fetcher: fetcher, applicationCode: configuration.applicationCode,
                diskCache: FlagCache(directory: StateDirectory(path: directory.path))),
            store: store, stateDirectory: StateDirectory(path: directory.path), configuration: configuration,
            hwid: "hwid-1", clock: clock, bootID: "boot-a", jitter: { 0.5 }, logger: Logger(level: .err),
            evaluations: tally)
        await refresher.start()
        await refresher.tick()
        // A function, not `withLock(\.stale)` inside `#expect`: Swift 6.0.3's compiler crashes expanding that.
        func isStale() -> Bool { refresher.status.withLock { $0.stale } }
        func reasons() -> Set<String> {
            tally.evaluated("a", in: store.current)
            return Set(tally.take().entries.keys.map(\.reason))
        }
        #expect(reasons() == ["targeting_match"])

        // The interval's request fails past RefreshInterval: the status says stale, and so does the next read.
        fetcher.answer(.failure(.httpStatus(503)))
        clock.advance(by: configuration.refreshInterval.seconds + 1)
        await refresher.tick()
        #expect(isStale())
        #expect(reasons() == ["stale"])

        // A fetch that succeeds ends it as promptly.
        fetcher.answer(.success(FeatureFlagsResponse(flags: [flag])))
        let result = await refresher.fetch(automatic: false)
        guard case .fetched = result else {
            Issue.record("the fetch did not succeed: \(result)")
            return
        }
        #expect(!isStale())
        #expect(reasons() == ["targeting_match"])

        // Stale again, then a reload retires the refresher: what it still publishes no longer reaches the tally,
        // which the next source's status has set.
        fetcher.answer(.failure(.httpStatus(503)))
        clock.advance(by: configuration.refreshInterval.seconds + 1)
        await refresher.tick()
        #expect(reasons() == ["stale"])
        await refresher.retire()
        tally.markStale(false)
        _ = await refresher.setAppState(foreground: false)
        #expect(isStale())
        #expect(reasons() == ["targeting_match"])
    }
}

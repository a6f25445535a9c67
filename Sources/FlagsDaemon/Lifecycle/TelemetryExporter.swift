import FlagsCore
import PushwooshAPI
import UnixIO

/// Exports the daemon's metrics and its `feature_flag.evaluation` records to an OpenTelemetry collector over
/// OTLP/HTTP, when `[Telemetry]` or the `OTEL_*` variables name one (docs/telemetry.md).
///
/// Its own task, its own HTTP client: a slow or absent collector delays nothing but the next export. Metrics are
/// cumulative, so a failed export loses nothing the next one does not carry; the evaluation records of a failed
/// export go back to the tally, which bounds them. A failure waits `ExportBackoff`'s jittered, capped time (or
/// the collector's `Retry-After`) before the next attempt, until the other signal's export to the same collector
/// goes through again (`ExportSchedule.collectorReturned`); a refused body (any other HTTP status) is dropped and
/// counted, never sent again. The settings are resolved before the daemon serves and again after each reload
/// (at the round that ends the wait it came during), so that a reload turns the export on, off or elsewhere.
final class TelemetryExporter: Service {
    private let server: SocketServer
    private let reloader: Reloader
    private let tally: EvaluationTally
    private let metrics: DaemonMetrics
    private let environment: [String: String]
    private let logger: Logger
    /// What the daemon resolved before it served (`prepare`), in effect until a reload.
    private let initial: Resolved
    /// When counting began: the start of every cumulative series.
    private let startNanos = MonotonicClock.wallNanoseconds()

    init(
        server: SocketServer, reloader: Reloader, tally: EvaluationTally, metrics: DaemonMetrics,
        environment: [String: String], initial: Resolved, logger: Logger
    ) {
        self.server = server
        self.reloader = reloader
        self.tally = tally
        self.metrics = metrics
        self.environment = environment
        self.initial = initial
        self.logger = logger
    }

    var name: String { "telemetry exporter" }

    /// A configuration and the settings it resolves to with the environment.
    struct Resolved: Sendable {
        var configuration: Configuration
        var resolution: TelemetrySettings.Resolution
    }

    /// Resolves the settings for `configuration` and starts or stops counting reads for them: called before the
    /// daemon serves, so that the first reads are counted too, and by the exporter after each reload. Nothing else
    /// changes them: the environment is the process's.
    static func prepare(
        _ tally: EvaluationTally, configuration: Configuration, environment: [String: String], instanceId: String
    ) -> Resolved {
        let resolution = TelemetrySettings.resolve(configuration, environment: environment, instanceId: instanceId)
        tally.configure(
            enabled: resolution.settings != nil, limit: resolution.settings?.records.limit ?? 0)
        return Resolved(configuration: configuration, resolution: resolution)
    }

    /// Both signals' schedules for `resolution`: the first export of each one interval after `now`.
    private static func schedules(
        for resolution: TelemetrySettings.Resolution, now: Double
    ) -> (metrics: ExportSchedule, logs: ExportSchedule) {
        (
            ExportSchedule(due: now + (resolution.settings?.metrics.interval.seconds ?? 0)),
            ExportSchedule(due: now + (resolution.settings?.logs.interval.seconds ?? 0))
        )
    }

    func run() async {
        var current = initial
        var client: (settings: TelemetrySettings, client: PushwooshClient)?
        var (metricsSchedule, logsSchedule) = Self.schedules(for: current.resolution, now: MonotonicClock.seconds())
        announce(current.resolution)
        // True when the wait below returned: it took the reload's signal.
        var reloaded = false
        while !Task.isCancelled {
            // Resolved again only after a reload: one that came while the exporter slept is applied at the round
            // that ends the sleep. Taken before the configuration is read, so that a reload meanwhile is seen at
            // the next round.
            if reloaded || reloader.reloadedForTelemetry.take() {
                reloaded = false
                let configuration = await reloader.configuration
                let resolved = Self.prepare(
                    tally, configuration: configuration, environment: environment,
                    instanceId: reloader.stacks.current.hwid)
                if resolved.resolution != current.resolution {
                    announce(resolved.resolution)
                    (metricsSchedule, logsSchedule) = Self.schedules(
                        for: resolved.resolution, now: MonotonicClock.seconds())
                }
                current = resolved
            }
            guard let settings = current.resolution.settings else {
                client = nil
                // Off: nothing to do until a reload turns it on; no timer wakes the daemon meanwhile.
                await reloader.reloadedForTelemetry.wait()
                reloaded = true
                continue
            }
            let http: PushwooshClient
            if let kept = client, kept.settings == settings {
                http = kept.client
            } else {
                http = PushwooshClient(
                    apiToken: nil, requestTimeout: settings.timeout, maximumReplyBytes: 64 * 1024,
                    caFile: settings.certificateFile)
                client = (settings, http)
            }
            let now = MonotonicClock.seconds()
            let next = min(metricsSchedule.due, logsSchedule.due)
            guard next <= now else {
                try? await Task.sleep(for: .seconds(next - now))
                continue
            }
            let encoder = OTLPEncoder(
                resource: settings.resource, startNanos: startNanos)
            if metricsSchedule.due <= now {
                let families = await server.metricFamilies()
                let body = encoder.metrics(families, nowNanos: MonotonicClock.wallNanoseconds())
                let outcome = await send(body, to: settings.metrics.url, headers: settings.headers, with: http)
                if finish(&metricsSchedule, signal: "metrics", outcome: outcome, interval: settings.metrics.interval),
                    settings.oneCollector
                {
                    logsSchedule.collectorReturned(now: MonotonicClock.seconds())
                }
            }
            if logsSchedule.due <= now {
                let (configuration, stack) = (current.configuration, reloader.stacks.current)
                let batch = tally.take()
                guard !batch.entries.isEmpty else {
                    logsSchedule.skipped(now: now, interval: settings.logs.interval)
                    continue
                }
                let context = OTLPEncoder.EvaluationContext(
                    setId: configuration.applicationCode,
                    contextId: settings.records.userId == .hashed
                        ? Self.hashedUserId(
                            stack.refresher.status.withLock(\.userId), applicationCode: configuration.applicationCode)
                        : nil,
                    includeValues: settings.records.values)
                let body = encoder.logs(batch, context: context, nowNanos: MonotonicClock.wallNanoseconds())
                let outcome = await send(body, to: settings.logs.url, headers: settings.headers, with: http)
                switch outcome {
                case .sent: break
                case .failed: tally.giveBack(batch)
                case .refused: tally.refused(batch)
                }
                if finish(&logsSchedule, signal: "logs", outcome: outcome, interval: settings.logs.interval),
                    settings.oneCollector
                {
                    metricsSchedule.collectorReturned(now: MonotonicClock.seconds())
                }
            }
        }
    }

    /// `feature_flag.context.id`: the user id never leaves the device; its SHA-256 with the application code does,
    /// so that one user reads as one id across a fleet and as different ids across applications.
    static func hashedUserId(_ userId: String, applicationCode: String) -> String {
        SHA256.hex(Array((applicationCode + ":" + userId).utf8))
    }

    /// How one export ended.
    enum Outcome: Sendable, Equatable {
        case sent
        /// Worth sending again: no answer, a timeout, 429, 502, 503, 504; `retryAfter` in seconds.
        case failed(reason: String, retryAfter: Double?)
        /// The collector will not take this body (another status): dropped.
        case refused(reason: String)
    }

    private func send(_ body: [UInt8], to url: String, headers: [String], with client: PushwooshClient) async
        -> Outcome
    {
        let result = await client.post(
            url: url, headers: headers + ["Content-Type: application/x-protobuf"], body: body)
        guard case .failure(let error) = result else { return .sent }
        return Self.outcome(of: error, now: Double(MonotonicClock.wallNanoseconds()) / 1e9)
    }

    /// The OTLP/HTTP rules: 429, 502, 503 and 504 are worth retrying, honouring `Retry-After`; so is no answer at
    /// all; any other status refuses the body.
    static func outcome(of error: PushwooshError, now: Double) -> Outcome {
        guard error.status != 0 else {
            return .failed(reason: "\(error.kind.rawValue): \(error.reason)", retryAfter: nil)
        }
        let reason = "HTTP \(error.status)"
        guard [429, 502, 503, 504].contains(error.status) else { return .refused(reason: reason) }
        return .failed(reason: reason, retryAfter: error.retryAfter.flatMap { RetryAfter.seconds($0, now: now) })
    }

    /// Counts and logs how an export ended and schedules the signal's next one; true when the export went through
    /// after failures, so that the collector is back.
    private func finish(
        _ schedule: inout ExportSchedule, signal: String, outcome: Outcome, interval: Duration
    ) -> Bool {
        let now = MonotonicClock.seconds()
        metrics.telemetryExport(signal: signal, outcome: outcome.label)
        switch outcome {
        case .sent:
            let returned = schedule.sent(now: now, interval: interval)
            if schedule.reported.take() != nil {
                logger.notice(
                    "the collector takes \(signal) again", ["PWFLAGS_EVENT": "telemetry-resumed", "SIGNAL": signal])
            }
            return returned
        case .failed(let reason, let retryAfter):
            schedule.failed(now: now, retryAfter: retryAfter, random: Double.random(in: 0..<1))
            report(
                reason, of: &schedule,
                "cannot export \(signal) to the collector (\(reason)); trying again with backoff",
                ["PWFLAGS_EVENT": "telemetry-failed", "SIGNAL": signal, "REASON": reason])
        case .refused(let reason):
            schedule.refused(now: now, interval: interval)
            report(
                reason, of: &schedule, "the collector refused the \(signal) (\(reason)); they are dropped",
                ["PWFLAGS_EVENT": "telemetry-refused", "SIGNAL": signal, "REASON": reason])
        }
        return false
    }

    /// Logs a failure once, until its reason changes: a collector that stays down is one line, not one a try.
    private func report(
        _ reason: String, of schedule: inout ExportSchedule, _ message: String, _ fields: KeyValuePairs<String, String>
    ) {
        guard schedule.reported != reason else { return }
        schedule.reported = reason
        logger.warning(message, fields)
    }

    /// Says where the export goes (never its headers), or why it is off.
    private func announce(_ resolution: TelemetrySettings.Resolution) {
        for problem in resolution.problems {
            logger.warning("telemetry: \(problem)", ["PWFLAGS_EVENT": "telemetry-settings"])
        }
        if let settings = resolution.settings {
            logger.notice(
                "exporting telemetry over OTLP/HTTP",
                [
                    "PWFLAGS_EVENT": "telemetry-on", "METRICS_URL": settings.metrics.url, "LOGS_URL": settings.logs.url,
                ])
        }
    }
}

extension TelemetryExporter.Outcome {
    /// The metric's `outcome` label.
    var label: String {
        switch self {
        case .sent: "sent"
        case .failed: "failed"
        case .refused: "refused"
        }
    }
}

import FlagsCore

/// What `metrics` reports, as metric families in a fixed order: every name, label and help text in one place.
struct DaemonMetricFamilies {
    let server: ServerMetrics
    let daemon: DaemonMetrics.Counts
    let flags: Int
    let revision: Int
    let ageSeconds: Double?
    let stale: Bool
    let partial: Bool
    /// The seed's flags (`SeedFile`) are served.
    let servingSeed: Bool
    /// Seconds until Pushwoosh's `Retry-After` lets requests go again (F3); 0 when nothing is held.
    let heldSeconds: Double
    let connections: Int
    let subscriptions: Int
    /// Flags a local override forces; zero until overrides exist.
    let overrides: Int
    /// Flag reads the telemetry could not keep a record of.
    let evaluationsDropped: Int
    /// Each surface's readers and listeners.
    let surfaces: [SurfaceGauge]

    typealias Sample = MetricFamily.Sample

    var families: [MetricFamily] {
        let requests = server.requestsByMethod.sorted { $0.key < $1.key }.map {
            Sample(labels: [("method", $0.key)], value: Double($0.value))
        }
        let errors = server.errors.sorted { $0.key < $1.key }.map {
            Sample(labels: [("code", String($0.key))], value: Double($0.value))
        }
        let refreshes = daemon.refreshes.sorted {
            ($0.key.trigger, $0.key.outcome, $0.key.status) < ($1.key.trigger, $1.key.outcome, $1.key.status)
        }.map {
            Sample(
                labels: [("trigger", $0.key.trigger), ("outcome", $0.key.outcome), ("status", String($0.key.status))],
                value: Double($0.value))
        }
        let failures = daemon.refreshFailures.sorted { $0.key < $1.key }.map {
            Sample(labels: [("reason", $0.key)], value: Double($0.value))
        }
        let impressions = daemon.impressions.sorted { $0.key < $1.key }.map {
            Sample(labels: [("outcome", $0.key)], value: Double($0.value))
        }
        let ofrepRequests = daemon.ofrepRequests.sorted {
            ($0.key.endpoint, $0.key.status) < ($1.key.endpoint, $1.key.status)
        }.map {
            Sample(labels: [("endpoint", $0.key.endpoint), ("status", String($0.key.status))], value: Double($0.value))
        }
        let exports = daemon.telemetryExports.sorted {
            ($0.key.signal, $0.key.outcome) < ($1.key.signal, $1.key.outcome)
        }.map {
            Sample(labels: [("signal", $0.key.signal), ("outcome", $0.key.outcome)], value: Double($0.value))
        }
        var propagation = MetricFamily(
            name: "pwflagsd_change_propagation_seconds", kind: .histogram,
            help: "Time from a change of the served flags (an upstream reply, a file change) to the last "
                + "subscriber's flagsChanged notification written.")
        propagation.histogram = server.propagation
        return [
            .counter("pwflagsd_requests", "Requests answered, by method.", requests),
            .counter("pwflagsd_errors", "Error responses, by JSON-RPC code.", errors),
            .counter(
                "pwflagsd_refreshes",
                "Requests to the flag source that ended, by trigger, outcome (complete, partial, failed) and "
                    + "R11 status (200 for a reply that was used).", refreshes),
            .counter(
                "pwflagsd_refresh_failures",
                "Failed requests to Pushwoosh, by reason (dns, connect, tls, timeout, tooLarge, cancelled, network, "
                    + "http, unusable, notSent).", failures),
            .counter("pwflagsd_impressions", "logImpression answers, by outcome.", impressions),
            .counter(
                "pwflagsd_ofrep_requests",
                "OFREP requests answered, by endpoint (single, bulk, other) and HTTP status.", ofrepRequests),
            .gauge("pwflagsd_flags", "Flags served.", Double(flags)),
            .gauge("pwflagsd_revision", "Revision of the served flag set since the daemon started.", Double(revision)),
            .gauge(
                "pwflagsd_flags_age_seconds", "Seconds since the served flags were fetched or the file read.",
                ageSeconds),
            .gauge("pwflagsd_flags_stale", "1 while the served flags are stale because refreshes fail.", stale ? 1 : 0),
            .gauge("pwflagsd_flags_partial", "1 while a partial response is served (R13).", partial ? 1 : 0),
            .gauge(
                "pwflagsd_flags_from_seed",
                "1 while the flags served are the device image's seed (SeedFile): nothing usable was fetched yet.",
                servingSeed ? 1 : 0),
            .gauge(
                "pwflagsd_refresh_held_seconds",
                "Seconds until Pushwoosh's Retry-After lets a request go again; 0 when nothing is held.", heldSeconds),
            .gauge("pwflagsd_connections", "Open client connections.", Double(connections)),
            .gauge("pwflagsd_subscriptions", "Open listen subscriptions.", Double(subscriptions)),
            .gauge("pwflagsd_overrides", "Flags forced by a local override.", Double(overrides)),
            MetricFamily(
                name: "pwflagsd_surface_connections", kind: .gauge,
                help: "Open client connections, by surface (line, varlink, ofrep).",
                samples: surfaces.map { Sample(labels: [("surface", $0.surface)], value: Double($0.connections)) }),
            MetricFamily(
                name: "pwflagsd_surface_listens", kind: .gauge,
                help: "Open listens (subscriptions, Varlink Listen calls, OFREP event streams), by surface.",
                samples: surfaces.map { Sample(labels: [("surface", $0.surface)], value: Double($0.listens)) }),
            .counter(
                "pwflagsd_telemetry_exports",
                "OTLP exports to the collector that ended, by signal (metrics, logs) and outcome (sent, failed, "
                    + "refused).", exports),
            .counter(
                "pwflagsd_telemetry_evaluations_dropped",
                "Flag reads left out of the evaluation records: past MaxEvaluationRecords in one interval, or "
                    + "refused by the collector.", [Sample(labels: [], value: Double(evaluationsDropped))]),
            propagation,
        ]
    }
}

import FlagsProtocol

/// `pwflags metrics`: the daemon's counters as OpenMetrics text (or the Prometheus text format).
extension Commands {
    func metrics() throws(CommandError) -> ExitCode {
        let parsed = try parse(["--format"])
        _ = try expect(parsed, [])
        let format: MetricsFormat
        switch parsed.options["--format"] {
        case nil: format = .openMetrics
        case let name?:
            guard let chosen = MetricsFormat(rawValue: name) else {
                throw .usage("--format must be openmetrics or prometheus, not '\(name)'")
            }
            format = chosen
        }
        let result = try request(.metrics(format: format), as: MetricsResult.self)
        if invocation.json {
            Output.line(result.jsonValue.serialized(), exact: true)
        } else {
            // The text ends with its own newline.
            Output.line(String(result.text.dropLast(result.text.hasSuffix("\n") ? 1 : 0)), exact: true)
        }
        return .success
    }
}

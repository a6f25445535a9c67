/// An OpenTelemetry collector's OTLP/HTTP address (`[Telemetry] OTLPEndpoint=`, `OTEL_EXPORTER_OTLP_ENDPOINT`).
///
/// `https://` is required, except for a collector on the device itself (`127.0.0.0/8`, `[::1]`, `localhost`),
/// which may take plain `http://`: what leaves the device is encrypted, and an agent on the device is the usual
/// first hop. Credentials in the address are refused, so that they never reach a log line or `--check-config`:
/// they go in `OTEL_EXPORTER_OTLP_HEADERS`.
public struct CollectorAddress: Sendable, Equatable, CustomStringConvertible {
    /// The address as given, without a trailing slash.
    public let base: String

    /// Checks `value`; the failure says why it cannot be a collector's address.
    public static func parse(_ value: String) -> Result<CollectorAddress, Problem> {
        guard ConfigurationParser.isHTTPURL(value) else { return .failure(.notHTTP) }
        let lowered = value.lowercased()
        let rest = afterScheme(lowered)
        let authority = Self.authority(of: rest)
        guard !authority.contains("@") else { return .failure(.credentials) }
        guard !rest.contains("?"), !rest.contains("#") else { return .failure(.query) }
        if lowered.hasPrefix("http://") {
            guard isLoopback(host(of: authority)) else { return .failure(.plainHTTP) }
        }
        var base = value
        while base.hasSuffix("/") { base.removeLast() }
        return .success(CollectorAddress(base: base))
    }

    /// Why an address was refused.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case notHTTP, credentials, query, plainHTTP

        public var description: String {
            switch self {
            case .notHTTP: "expected an absolute https:// URL with a host"
            case .credentials: "credentials do not belong in the address: use OTEL_EXPORTER_OTLP_HEADERS"
            case .query: "expected no query or fragment"
            case .plainHTTP: "plain http:// is only for a collector on this device (127.0.0.1, [::1], localhost)"
            }
        }
    }

    /// Where a signal goes: the base with `v1/metrics` or `v1/logs` appended, as the OTLP exporters do.
    public func url(for signalPath: String) -> String { base + "/" + signalPath }

    public var description: String { base }

    /// The scheme and authority of a signal's `url` (`https://otel.example.net:4318`), lowercased: which collector
    /// it names, whatever the path.
    public static func origin(of url: String) -> String {
        let lowered = url.lowercased()
        let rest = afterScheme(lowered)
        return String(lowered[..<rest.startIndex] + authority(of: rest))
    }

    /// `lowered` past its `https://` or `http://`.
    private static func afterScheme(_ lowered: String) -> Substring {
        lowered.dropFirst(lowered.hasPrefix("https://") ? 8 : lowered.hasPrefix("http://") ? 7 : 0)
    }

    /// The host and port at the start of `rest`: up to its path, query or fragment.
    private static func authority(of rest: Substring) -> Substring {
        rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    }

    private static func host(of authority: Substring) -> Substring {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return authority[authority.index(after: authority.startIndex)..<close]
        }
        return authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? authority
    }

    private static func isLoopback(_ host: Substring) -> Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}

import FlagsCore
public import FoundationEssentials

/// Where calls go: the default Pushwoosh address or an accepted reverse proxy (R16).
///
/// Every upstream address rule is reached through here. The text rules (API path, application-code alphabet,
/// default address) are defined once in FlagsCore's ``PushwooshAddress``, because configuration checking sits
/// below this module; this type adds the URL rules on top of them.
public enum PushwooshEndpoint {
    /// The path every base address must end with (R16).
    public static let requiredSuffix = PushwooshAddress.apiPath

    /// `https://{applicationCode}.api.pushwoosh.com/json/1.3/`, or nil when the code cannot be a host label.
    public static func defaultBase(applicationCode: String) -> URL? {
        PushwooshAddress.defaultBase(applicationCode: applicationCode).flatMap { URL(string: $0) }
    }

    /// True when `string` may serve as a base address under R16.
    ///
    /// R16 asks for the `json/1.3/` ending; an http or https scheme and a host are required as well, since
    /// nothing else can be called.
    public static func isAcceptableBase(_ string: String) -> Bool {
        guard string.hasSuffix(requiredSuffix), let components = URLComponents(string: string),
            let scheme = components.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = components.host, !host.isEmpty, components.query == nil, components.fragment == nil
        else { return false }
        return URL(string: string) != nil
    }

    /// True when a `base_url` from a reply may move the daemon to `string`: an acceptable base over https.
    ///
    /// Plain http is for the operator's `ServerURL` only (a local reverse proxy): a reply, or whoever tampers
    /// with one, must never move the daemon off TLS, where the API token and every later reply could be read
    /// and changed on the way.
    public static func isAcceptableMove(_ string: String) -> Bool {
        guard isAcceptableBase(string), let scheme = URLComponents(string: string)?.scheme else { return false }
        return scheme.lowercased() == "https"
    }

    /// The base for the configuration: `serverURL` when set (and acceptable), else the default address.
    ///
    /// Fails with status 0 (never sent) for a rejected server URL or an unusable application code.
    public static func base(serverURL: String?, applicationCode: String) -> Result<URL, PushwooshError> {
        if let serverURL {
            guard isAcceptableBase(serverURL), let url = URL(string: serverURL) else {
                return .failure(.notSent("server URL \(serverURL) does not end with \(requiredSuffix) (R16)"))
            }
            return .success(url)
        }
        guard let url = defaultBase(applicationCode: applicationCode) else {
            return .failure(.notSent(applicationCode.isEmpty ? "no application code" : "invalid application code"))
        }
        return .success(url)
    }
}

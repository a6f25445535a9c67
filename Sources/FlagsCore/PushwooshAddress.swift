/// The upstream address rules in their text form: the API path, the application-code alphabet and the default
/// server address (R16).
///
/// They live here, at the bottom, so that configuration checking and `--check-config` rendering (this module) and
/// the HTTP client's `PushwooshEndpoint` (PushwooshAPI, which builds its URL rules on these) read one definition.
/// No Foundation: only string rules belong here; URL parsing stays in `PushwooshEndpoint`.
public enum PushwooshAddress {
    /// The path every base address must end with (R16).
    public static let apiPath = "json/1.3/"

    /// True when `code` is a non-empty run of ASCII letters, digits and hyphens.
    ///
    /// The code becomes part of a host name, so anything else is refused rather than letting a configuration
    /// typo point the daemon at another host.
    public static func isApplicationCode(_ code: String) -> Bool {
        !code.isEmpty && code.unicodeScalars.allSatisfy { isApplicationCodeScalar($0) }
    }

    /// `https://{applicationCode}.api.pushwoosh.com/json/1.3/`, or nil when `applicationCode` is not a valid code.
    public static func defaultBase(applicationCode: String) -> String? {
        isApplicationCode(applicationCode) ? "https://\(applicationCode).api.pushwoosh.com/\(apiPath)" : nil
    }

    private static func isApplicationCodeScalar(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "-"
    }
}

/// What the caller found at the API token file, for printing the configuration; never the token itself.
public enum APITokenStatus: Sendable, Equatable {
    /// The file holds a token of this many bytes.
    case present(byteCount: Int)
    /// There is no token file, or it is empty.
    case missing
    /// The file exists but could not be read; the reason is an OS message such as `Permission denied`.
    case unreadable(reason: String)
}

/// Where the OFREP listener listens (`[OFREP] ListenAddress=`): a Unix socket path, or a loopback TCP address.
public enum OFREPListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// An absolute path; the socket file is created with `SocketMode`.
    case unix(path: String)
    /// A numeric loopback address (`127.0.0.1`…`127.255.255.255`, `::1`) and a port; 0 lets the kernel pick one.
    case tcp(host: String, port: UInt16)

    /// Reads `/run/pwflagsd/ofrep.sock`, `127.0.0.1:8016`, `[::1]:8016` or `localhost:8016`; nil for anything
    /// else, a non-loopback host included: the listener serves this device only.
    public init?(parsing text: String) {
        if text.hasPrefix("/") {
            guard !text.contains(where: { $0.isNewline || $0 == "\0" }), text.utf8.count < 108 else { return nil }
            self = .unix(path: text)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
            guard host == "::1" else { return nil }
        } else if host == "localhost" {
            host = "127.0.0.1"
        } else {
            let parts = host.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4, parts[0] == "127", parts.allSatisfy({ UInt8($0) != nil }) else { return nil }
        }
        self = .tcp(host: host, port: port)
    }

    public var description: String {
        switch self {
        case .unix(let path): path
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }

    /// True for TCP, where clients must present the token.
    public var isTCP: Bool {
        if case .tcp = self { return true }
        return false
    }
}

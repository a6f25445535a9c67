import FlagsCore
import FoundationEssentials
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Opens the OFREP listener's socket: the descriptor socket activation named `ofrep`, else `[OFREP]
/// ListenAddress=`; and reads the token TCP clients must send.
struct OFREPListener: Sendable {
    /// The listening socket, non-blocking.
    var fd: Int32
    var isTCP: Bool
    /// What the log says it listens on.
    var address: String
    /// A socket file this daemon created and removes at exit; nil for TCP and for activated sockets.
    var ownedPath: String?

    /// Why the listener cannot open: the one error of OFREP's start, which the daemon logs before it serves the
    /// line protocol without OFREP. `code` says what kind of failure it is, `message` says it in one line, and
    /// `cause` is the system call that failed, when one did.
    enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The socket systemd passed as `ofrep` could not be used.
        case activatedSocketUnusable(cause: SystemError)
        /// Listening on `address` (`host:port` or a socket path) failed.
        case cannotListen(address: String, cause: SystemError)
        /// Another live process accepts on the socket path.
        case socketInUse(path: String)
        /// Something that is not a socket is at the socket path; it is never removed.
        case notASocket(path: String)
        /// `TokenFile` could not be read, or is larger than a token can be.
        case tokenUnreadable(path: String, cause: SystemError)
        /// `TokenFile` holds no token.
        case tokenEmpty(path: String)
        /// `TokenFile` holds a token shorter than `minimumTokenBytes`: it could be guessed.
        case tokenTooShort(path: String, bytes: Int)

        /// The kind of failure, for programs and tests to branch on; more may come.
        typealias Code = ErrorCode<OFREPListener.Failure>

        var code: Code {
            switch self {
            case .activatedSocketUnusable, .cannotListen: .socketUnavailable
            case .socketInUse, .notASocket: .socketTaken
            case .tokenUnreadable, .tokenEmpty, .tokenTooShort: .tokenUnavailable
            }
        }

        /// What went wrong, in one line.
        var message: String {
            switch self {
            case .activatedSocketUnusable(let cause): "cannot use the activated OFREP socket: \(cause)"
            case .cannotListen(let address, let cause): "cannot listen on \(address): \(cause.reason)"
            case .socketInUse(let path): "another process serves \(path); not taking its socket"
            case .notASocket(let path): "\(path) exists and is not a socket"
            case .tokenUnreadable(let path, let cause): "cannot read the OFREP TokenFile \(path): \(cause.reason)"
            case .tokenEmpty(let path): "the OFREP TokenFile \(path) is empty"
            case .tokenTooShort(let path, let bytes):
                "the OFREP TokenFile \(path) holds a token of \(bytes) bytes; at least \(OFREPListener.minimumTokenBytes)"
                    + " are needed to resist guessing (for example: openssl rand -base64 32)"
            }
        }

        /// The system call that failed, when one did.
        var cause: SystemError? {
            switch self {
            case .activatedSocketUnusable(let cause), .cannotListen(_, let cause), .tokenUnreadable(_, let cause):
                cause
            case .socketInUse, .notASocket, .tokenEmpty, .tokenTooShort: nil
            }
        }

        var description: String { message }
    }

    /// The listener to serve, nil when OFREP is off. `activated` are the descriptors named `ofrep`.
    static func open(_ configuration: Configuration, activated: [Int32]) throws(Failure) -> OFREPListener? {
        if let fd = activated.first {
            for extra in activated.dropFirst() { close(extra) }
            do {
                try UnixSocket.setNonBlocking(fd)
            } catch {
                throw .activatedSocketUnusable(cause: error)
            }
            let family = InetSocket.family(fd)
            let isTCP = family == AF_INET || family == AF_INET6
            let address = isTCP ? "TCP port \(InetSocket.localPort(fd).map(String.init) ?? "?")" : "(socket activation)"
            return OFREPListener(fd: fd, isTCP: isTCP, address: address, ownedPath: nil)
        }
        switch configuration.ofrepListenAddress {
        case nil:
            return nil
        case .tcp(let host, let port):
            do {
                let fd = try InetSocket.listen(host: host, port: port)
                let bound = InetSocket.localPort(fd) ?? port
                let shown = host.contains(":") ? "[\(host)]:\(bound)" : "\(host):\(bound)"
                return OFREPListener(fd: fd, isTCP: true, address: shown, ownedPath: nil)
            } catch {
                throw .cannotListen(address: "\(host):\(port)", cause: error)
            }
        case .unix(let path):
            switch UnixSocket.probe(path) {
            case .inUse: throw .socketInUse(path: path)
            case .notASocket: throw .notASocket(path: path)
            case .stale: unlink(path)
            case .absent: break
            }
            do {
                let fd = try UnixSocket.listen(at: path, mode: configuration.socketMode)
                return OFREPListener(fd: fd, isTCP: false, address: path, ownedPath: path)
            } catch {
                throw .cannotListen(address: path, cause: error)
            }
        }
    }

    /// The shortest token the listener takes: 16 bytes of base64 are 96 bits, past any guessing at the rate
    /// wrong tokens are answered (`DelayedRefusals`).
    public static let minimumTokenBytes = 16

    /// The token in `TokenFile`, without the line end an editor adds; nil when no file is set.
    static func token(_ configuration: Configuration) throws(Failure) -> [UInt8]? {
        guard let path = configuration.ofrepTokenFile else { return nil }
        var bytes: [UInt8]
        do {
            bytes = try FileReading.contents(ofPath: path, limit: 4096)
        } catch {
            throw .tokenUnreadable(path: path, cause: error)
        }
        while let last = bytes.last, last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 { bytes.removeLast() }
        guard !bytes.isEmpty else { throw .tokenEmpty(path: path) }
        guard bytes.count >= minimumTokenBytes else { throw .tokenTooShort(path: path, bytes: bytes.count) }
        return bytes
    }
}

extension ErrorCode where Domain == OFREPListener.Failure {
    /// The listening socket could not be opened or used.
    static var socketUnavailable: Self { Self("socketUnavailable") }
    /// The socket path is served by another process, or holds something that is not a socket.
    static var socketTaken: Self { Self("socketTaken") }
    /// `TokenFile` gives no token.
    static var tokenUnavailable: Self { Self("tokenUnavailable") }
}

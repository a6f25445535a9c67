public import FlagsCore
import FoundationEssentials
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Opens the OFREP listener's socket: the descriptor socket activation named `ofrep`, else `[OFREP]
/// ListenAddress=`; and reads the token TCP clients must send.
public struct OFREPListener: Sendable {
    /// The listening socket, non-blocking.
    public var fd: Int32
    public var isTCP: Bool
    /// What the log says it listens on.
    public var address: String
    /// A socket file this daemon created and removes at exit; nil for TCP and for activated sockets.
    public var ownedPath: String?

    /// Why the listener cannot open; the daemon logs it and serves the line protocol without OFREP.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The listener to serve, nil when OFREP is off. `activated` are the descriptors named `ofrep`.
    public static func open(_ configuration: Configuration, activated: [Int32]) throws(Failure) -> OFREPListener? {
        if let fd = activated.first {
            for extra in activated.dropFirst() { close(extra) }
            do {
                try UnixSocket.setNonBlocking(fd)
            } catch {
                throw Failure(description: "cannot use the activated OFREP socket: \(error)")
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
                throw Failure(description: "cannot listen on \(host):\(port): \(error.reason)")
            }
        case .unix(let path):
            switch UnixSocket.probe(path) {
            case .inUse: throw Failure(description: "another process serves \(path); not taking its socket")
            case .notASocket: throw Failure(description: "\(path) exists and is not a socket")
            case .stale: unlink(path)
            case .absent: break
            }
            do {
                let fd = try UnixSocket.listen(at: path, mode: configuration.socketMode)
                return OFREPListener(fd: fd, isTCP: false, address: path, ownedPath: path)
            } catch {
                throw Failure(description: "cannot listen on \(path): \(error.reason)")
            }
        }
    }

    /// The token in `TokenFile`, without the line end an editor adds; nil when no file is set.
    public static func token(_ configuration: Configuration) throws(Failure) -> [UInt8]? {
        guard let path = configuration.ofrepTokenFile else { return nil }
        var bytes: [UInt8]
        do {
            bytes = try FileReading.contents(ofPath: path, limit: 4096)
        } catch {
            throw Failure(description: "cannot read the OFREP TokenFile \(path): \(error.reason)")
        }
        while let last = bytes.last, last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 { bytes.removeLast() }
        guard !bytes.isEmpty else { throw Failure(description: "the OFREP TokenFile \(path) is empty") }
        return bytes
    }
}

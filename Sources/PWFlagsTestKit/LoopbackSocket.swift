import Glibc
import UnixIO

/// The few POSIX socket calls the fake server needs, on 127.0.0.1 only.
enum LoopbackSocket {
    /// A socket failure naming the call.
    struct Failure: Error, CustomStringConvertible {
        var call: String
        var code: Int32
        var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    /// A TCP socket bound to 127.0.0.1 on an ephemeral port, and that port.
    static func bound() throws(Failure) -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(call: "socket", code: errno) }
        var reuse: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bindResult = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bindResult == 0 else {
            let code = errno
            close(fd)
            throw Failure(call: "bind", code: code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let nameResult = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard nameResult == 0 else {
            let code = errno
            close(fd)
            throw Failure(call: "getsockname", code: code)
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// Sends every byte; false when the peer is gone. MSG_NOSIGNAL keeps a vanished client from raising SIGPIPE.
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                try? syscall("send") {
                    send(fd, buffer.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
                }
            }
            guard let sent, sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Receives up to `count` bytes; empty at end of stream or on error.
    static func receive(_ fd: Int32, upTo count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let received = buffer.withUnsafeMutableBytes { raw in
            try? syscall("recv") { recv(fd, raw.baseAddress, count, 0) }
        }
        guard let received, received > 0 else { return [] }
        return Array(buffer.prefix(received))
    }

    /// Waits up to `duration` for the peer to send or leave; true when it did something (usually: left).
    static func waitForPeer(_ fd: Int32, upTo duration: Duration) -> Bool {
        LineReader.waitReadable(fd, until: ContinuousClock.now + duration)
    }

    /// Closes with a TCP reset instead of a clean end, as a crashed server would.
    static func reset(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// Bounds a blocking receive, so a silent client cannot pin a handler thread forever.
    static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
}

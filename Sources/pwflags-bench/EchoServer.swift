import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The floors: minimal AF_UNIX echo servers that write back whatever they read. No daemon can answer a line faster
/// than the kernel carries it there and back.
final class EchoServer: @unchecked Sendable {
    /// How the server is built.
    enum Design {
        /// A thread per connection, blocking reads: the floor.
        case threadPerConnection
        /// A second floor, built like pwflagsd's socket loop (one thread, epoll, non-blocking sockets) but doing
        /// no work per line. The distance from the blocking echo to this one is what the single-threaded epoll
        /// design costs; the distance from this one to pwflagsd is what answering a `get` costs.
        case epoll
    }

    private let listening: EchoListener
    var path: String { listening.path }

    init(path: String, design: Design = .threadPerConnection) throws {
        listening = try EchoListener(path: path)
        let listener = listening.descriptor
        switch design {
        case .threadPerConnection:
            let flags = fcntl(listener, F_GETFL)
            _ = fcntl(listener, F_SETFL, flags & ~O_NONBLOCK)
            Thread {
                while true {
                    guard let fd = try? syscall("accept", { accept(listener, nil, nil) }) else { return }
                    Thread { EchoServer.echo(fd) }.start()
                }
            }.start()
        case .epoll:
            Thread { EchoServer.epollLoop(listener) }.start()
        }
    }

    func stop() {
        listening.stop()
    }

    private static func echo(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        defer { close(fd) }
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                try? syscall("read") { read(fd, raw.baseAddress, raw.count) }
            }
            guard let count, count > 0 else { return }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes { raw in
                    send(fd, raw.baseAddress.map { $0 + offset }, count - offset, Int32(MSG_NOSIGNAL))
                }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}

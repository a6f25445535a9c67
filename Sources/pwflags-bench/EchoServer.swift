import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The floor: a minimal AF_UNIX echo server, a thread per connection, that writes back whatever it reads.
/// No daemon can answer a line faster than the kernel carries it there and back.
final class EchoServer: @unchecked Sendable {
    private let listening: EchoListener
    var path: String { listening.path }

    init(path: String) throws {
        listening = try EchoListener(path: path)
        let listener = listening.descriptor
        let flags = fcntl(listener, F_GETFL)
        _ = fcntl(listener, F_SETFL, flags & ~O_NONBLOCK)
        let thread = Thread { [listener] in
            while true {
                guard let fd = try? syscall("accept", { accept(listener, nil, nil) }) else { return }
                Thread { EchoServer.echo(fd) }.start()
            }
        }
        thread.start()
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

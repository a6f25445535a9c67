import CLinux
import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A second floor: an echo server built like pwflagsd's socket loop (one thread, epoll, non-blocking
/// sockets) but doing no work per line. The distance from the blocking echo to this one is what the
/// single-threaded epoll design costs; the distance from this one to pwflagsd is what answering a `get` costs.
final class EpollEchoServer: @unchecked Sendable {
    private let listening: EchoListener
    var path: String { listening.path }

    init(path: String) throws {
        listening = try EchoListener(path: path)
        let listener = listening.descriptor
        Thread { EpollEchoServer.loop(listener) }.start()
    }

    func stop() {
        listening.stop()
    }

    private static func loop(_ listener: Int32) {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        var event = epoll_event()
        event.events = UInt32(EPOLLIN.rawValue)
        event.data.fd = listener
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event)
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            guard let count = try? syscall("epoll_wait", { epoll_wait(epoll, &events, Int32(events.count), -1) }) else {
                return
            }
            for index in 0..<Int(count) {
                let fd = events[index].data.fd
                if fd == listener {
                    let client = accept(listener, nil, nil)
                    if client < 0 {
                        if errno == EINVAL || errno == EBADF { return }
                        continue
                    }
                    _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
                    var added = epoll_event()
                    added.events = UInt32(EPOLLIN.rawValue)
                    added.data.fd = client
                    _ = epoll_ctl(epoll, EPOLL_CTL_ADD, client, &added)
                    continue
                }
                let read = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if read <= 0 {
                    if read < 0, errno == EAGAIN { continue }
                    close(fd)
                    continue
                }
                // Small writes to a socket with room never block; the benchmark's loads stay far below its buffer.
                _ = buffer.withUnsafeBytes { send(fd, $0.baseAddress, read, Int32(MSG_NOSIGNAL)) }
            }
        }
    }
}

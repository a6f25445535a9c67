import CLinux
import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// epoll and the eventfd doorbell.
@Suite(.hangLimit) struct EpollTests {
    @Test("The event bits spelled out in Swift are the kernel headers' values")
    func eventBitsMatchHeaders() {
        #expect(Epoll.Events.input.rawValue == UInt32(EPOLLIN.rawValue))
        #expect(Epoll.Events.output.rawValue == UInt32(EPOLLOUT.rawValue))
        #expect(Epoll.Events.error.rawValue == UInt32(EPOLLERR.rawValue))
        #expect(Epoll.Events.hangup.rawValue == UInt32(EPOLLHUP.rawValue))
        #expect(Epoll.Events.readHangup.rawValue == UInt32(EPOLLRDHUP.rawValue))
    }

    @Test("A rung eventfd wakes the wait with its descriptor; drained, it is quiet again")
    func eventFDWakesTheWait() throws {
        let epoll = try Epoll()
        defer { epoll.close() }
        let bell = try EventFD()
        defer { bell.close() }
        try epoll.add(bell.descriptor, events: .input)
        let buffer = Epoll.Buffer(capacity: 4)
        #expect(try epoll.wait(into: buffer, timeout: 0) == 0)
        bell.ring()
        bell.ring()
        #expect(try epoll.wait(into: buffer, timeout: 1000) == 1)
        #expect(buffer[0].descriptor == bell.descriptor)
        #expect(buffer[0].events.contains(.input))
        bell.drain()
        #expect(try epoll.wait(into: buffer, timeout: 0) == 0)
    }

    @Test("A descriptor modified to no events stays registered but silent; removed, it can be added again")
    func modifyAndRemove() throws {
        let epoll = try Epoll()
        defer { epoll.close() }
        let bell = try EventFD()
        defer { bell.close() }
        try epoll.add(bell.descriptor, events: .input)
        bell.ring()
        try epoll.modify(bell.descriptor, events: [])
        let buffer = Epoll.Buffer(capacity: 4)
        #expect(try epoll.wait(into: buffer, timeout: 0) == 0)
        #expect(throws: SystemError("epoll_ctl(ADD)", errno: EEXIST)) { try epoll.add(bell.descriptor, events: .input) }
        epoll.remove(bell.descriptor)
        try epoll.add(bell.descriptor, events: .input)
        #expect(try epoll.wait(into: buffer, timeout: 0) == 1)
    }
}

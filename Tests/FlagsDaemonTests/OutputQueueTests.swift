import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The engine's output queue: queued pieces go out gathered, in order, resuming mid-piece after a short send.
@Suite(.hangLimit) struct OutputQueueTests {
    /// A connected pair of Unix stream sockets, closed at the end of `body`.
    static func withSocketPair(_ body: (Int32, Int32) throws -> Void) throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        try body(fds[0], fds[1])
    }

    static func received(_ fd: Int32, count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let read = recv(fd, &buffer, count, Int32(MSG_DONTWAIT))
        return Array(buffer.prefix(max(0, read)))
    }

    @Test func severalQueuedPiecesGoOutInOneGatheringSend() throws {
        try Self.withSocketPair { sender, receiver in
            var queue = OutputQueue()
            queue.append(Array("HTTP/1.1 200 OK\r\n\r\n".utf8))
            queue.append(Array("{\"flags\":".utf8))
            queue.append(shared: ByteChunk(Array("[]}".utf8)))
            var calls: [Int] = []
            let sent = queue.send(to: sender) { fd, count, buffer in
                calls.append(count)
                return UnixSocket.send(fd, gathering: count, buffer)
            }
            #expect(sent)
            #expect(calls == [3])
            #expect(queue.pendingBytes == 0)
            #expect(
                String(decoding: Self.received(receiver, count: 100), as: UTF8.self)
                    == "HTTP/1.1 200 OK\r\n\r\n{\"flags\":[]}")
        }
    }

    @Test func aShortSendResumesInsideThePieceItStoppedIn() throws {
        try Self.withSocketPair { sender, receiver in
            var queue = OutputQueue()
            queue.append(Array("abcdef".utf8))
            queue.append(Array("ghij".utf8))
            var first = true
            let sent = queue.send(to: sender) { fd, count, buffer in
                guard first else { return UnixSocket.send(fd, gathering: count, buffer) }
                first = false
                // The socket takes 8 bytes: all of the first piece and two of the second.
                return UnixSocket.send(fd, gathering: 2) { index in
                    index == 0 ? buffer(0) : UnsafeRawBufferPointer(rebasing: buffer(1)[0..<2])
                }
            }
            #expect(sent)
            #expect(queue.sentBytes == 10)
            #expect(String(decoding: Self.received(receiver, count: 100), as: UTF8.self) == "abcdefghij")
        }
    }

    @Test func theFirstUnsentLineIsFoundAcrossPieces() {
        var queue = OutputQueue()
        queue.append(Array("{\"id\":1,".utf8))
        queue.append(shared: ByteChunk(Array("\"result\":{}}\n{\"id\":2}\n".utf8)))
        queue.bytes.append(contentsOf: Array("{\"id\":3}\n".utf8))
        #expect(queue.unsentOfFirstLine() == 21)
        #expect(queue.pendingBytes == 21 + 9 + 9)
    }
}

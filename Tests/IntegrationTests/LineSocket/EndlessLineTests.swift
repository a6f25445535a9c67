import FlagsCore
import Foundation
import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A client that sends 100 MiB without a newline is cut off at `MaxLineBytes`; the daemon never buffers the rest.
@Suite(.hangLimit) struct EndlessLineTests {
    @Test func aHundredMebibytesWithoutANewlineAreRefusedAtMaxLineBytesAndNeverBuffered() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let pid = daemon.process.processIdentifier
        let before = try #require(ProcessStatus(pid: pid))
        let client = try daemon.connect()
        // A daemon that stopped reading without closing would block the writes: give up after 10 s instead.
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(client.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let total = 100 << 20
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        var accepted = 0
        var failure: Int32 = 0
        // Every byte is an "x", so a partial send simply goes on with the whole chunk again.
        writing: while accepted < total {
            switch chunk.withUnsafeBytes({ UnixSocket.send(client.fd, $0) }) {
            case .sent(let written): accepted += written
            case .wouldBlock:
                failure = EAGAIN
                break writing
            case .failed(let error):
                failure = error.errno
                break writing
            }
        }
        #expect(failure == EPIPE || failure == ECONNRESET, "write ended with errno \(failure) after \(accepted) bytes")
        // What got in before the close: the line limit, one read buffer and the socket's buffers, not 100 MiB.
        #expect(accepted < 4 << 20, "the daemon took \(accepted) bytes of a line")
        let response = try #require(client.readJSON(), "log:\n\(daemon.log)")
        #expect(response["id"] == .null)
        #expect(response["error"]?["code"] == -32600)
        #expect(response["error"]?["message"]?.stringValue?.contains("line too long") == true)
        #expect(client.isClosedByPeer())
        let after = try #require(ProcessStatus(pid: pid))
        // Memory bounds are for plain builds: a sanitizer's quarantine and shadow memory make the figure meaningless.
        #expect(
            Sanitizer.isActive || after.peakResidentKiB - before.residentKiB < 16_000,
            "before \(before), after \(after)")
        #expect(try daemon.connect().call("get", ["key": "dark_mode"])?["result"]?["flag"]?["key"] == "dark_mode")
        print("endless line: the daemon took \(accepted) bytes before closing; before \(before), after \(after)")
    }
}

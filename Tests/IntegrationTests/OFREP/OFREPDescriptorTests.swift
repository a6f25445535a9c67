import Foundation
import TestSupport
import Testing

/// The daemon's descriptors: every socket it accepts, on either listener, is close-on-exec, so that no program it
/// starts inherits a client's connection.
@Suite(.hangLimit) struct OFREPDescriptorTests {
    @Test(arguments: [false, true]) func everyAcceptedSocketIsCloseOnExec(tcp: Bool) throws {
        let rig = try OFREPRig(tcp: tcp)
        defer { rig.cleanUp() }
        let pid = rig.daemon.process.processIdentifier
        let before = Self.socketFlags(of: pid)
        // An OFREP connection kept alive after its answer, and a line-protocol connection, both open now.
        let http = try rig.client()
        #expect(http.send(HTTPClient.post(OFREPRig.single("banner"), headers: rig.authorization)))
        #expect(http.readResponse()?.status == 200)
        let line = try rig.daemon.connect()
        #expect(try line.call("get", ["key": "banner"], id: "1")?["result"] != nil)

        let accepted = Self.socketFlags(of: pid).filter { before[$0.key] == nil }
        #expect(accepted.count == 2, "\(accepted)")
        for (fd, flags) in accepted {
            #expect(
                flags & 0o2_000_000 != 0, "descriptor \(fd) (flags \(String(flags, radix: 8))) is not close-on-exec")
        }
    }

    /// The `flags:` of every socket of process `pid` (by its `socket:[inode]` name), from /proc/PID/fdinfo.
    static func socketFlags(of pid: Int32) -> [String: Int] {
        let directory = "/proc/\(pid)/fd"
        var result: [String: Int] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name),
                target.hasPrefix("socket:"),
                let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(name)", encoding: .utf8),
                let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }),
                let flags = Int(line.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8)
            else { continue }
            result[target] = flags
        }
        return result
    }
}

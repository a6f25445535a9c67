import FlagsCore
import Foundation
import TestSupport
import Testing

/// Daemons with the OFREP listener on, over a Unix socket or loopback TCP, for the OFREP suites.
struct OFREPRig {
    static let checkout = Flag(
        key: "new_checkout", isEnabled: true, ruleId: "r_1a2b3c4d",
        properties: ["button_color": "green", "max_items": 3, "discount": 0.15, "layout": ["columns": 2]])
    static let banner = Flag(key: "banner", isEnabled: false, ruleId: "default")
    static let killed = Flag(key: "old_search", isEnabled: false, ruleId: "")
    static let flags = [checkout, banner, killed]
    static let token = "ofrep-test-token-4f2a"

    let daemon: DaemonProcess
    /// The Unix socket path, or nil for TCP.
    let socketPath: String?
    /// The TCP port, or nil for a Unix socket.
    let port: UInt16?

    /// Starts a daemon serving `flags` from a local file, OFREP on a Unix socket (`tcp`: on 127.0.0.1, a port the
    /// kernel picks, with `token` required), `extra` lines in `[OFREP]`, and `environment` for the daemon.
    init(
        _ flags: [Flag] = Self.flags, tcp: Bool = false, extra: String = "", tokenFile: [UInt8]? = nil,
        environment: [String: String] = [:]
    ) throws {
        let directory = try TemporaryDirectory()
        try directory.write(LocalFlags.fileName, LocalFlags.text(flags))
        let path = directory.file("ofrep.sock")
        var section = "[OFREP]\n"
        if tcp {
            try Data(tokenFile ?? Array((Self.token + "\n").utf8)).write(
                to: URL(fileURLWithPath: directory.file("ofrep-token")))
            section += "ListenAddress=127.0.0.1:0\nTokenFile=\(directory.file("ofrep-token"))\n"
        } else {
            section += "ListenAddress=\(path)\n"
        }
        do {
            daemon = try DaemonProcess(
                config: LocalFlags.config(in: directory, extra: section + extra), directory: directory,
                environment: environment)
        } catch {
            directory.remove()
            throw error
        }
        socketPath = tcp ? nil : path
        // The daemon logs the bound address before READY=1, which DaemonProcess waited for.
        port = tcp ? Self.port(in: daemon.log) : nil
        if tcp, port == nil { Issue.record("no OFREP port in the log:\n\(daemon.log)") }
    }

    static func port(in log: String) -> UInt16? {
        guard let range = log.range(of: "OFREP listening ADDRESS=127.0.0.1:") else { return nil }
        return UInt16(log[range.upperBound...].prefix { $0.isNumber })
    }

    /// A new connection to the listener.
    func client() throws -> HTTPClient {
        if let socketPath { return try HTTPClient(unixSocket: socketPath) }
        return try HTTPClient(port: try #require(port))
    }

    /// The header line that authenticates on TCP; none is needed on the Unix socket.
    var authorization: [String] { port == nil ? [] : ["Authorization: Bearer \(Self.token)"] }

    /// Posts on a new connection.
    func post(_ path: String, body: String = "{}", headers: [String] = []) throws -> HTTPClient.Response? {
        try client().post(path, body: body, headers: authorization + headers)
    }

    static let bulk = "/ofrep/v1/evaluate/flags"
    static func single(_ key: String) -> String { bulk + "/" + key }

    /// Checks that the daemon is up and answers both OFREP and the line protocol.
    func expectStillServing(sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(daemon.isRunning, "pwflagsd exited; its log:\n\(daemon.log)", sourceLocation: sourceLocation)
        let answer = try post(Self.single("new_checkout"))
        #expect(answer?.status == 200, sourceLocation: sourceLocation)
        #expect(answer?.json?["value"] == true, sourceLocation: sourceLocation)
        let line = try daemon.connect().call("get", ["key": "new_checkout"], id: "check")
        #expect(line?["result"]?["flag"]?["key"] == "new_checkout", sourceLocation: sourceLocation)
    }

    func cleanUp() { daemon.cleanUp() }
}

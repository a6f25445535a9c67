import FlagsCore
public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small HTTP/1.1 server on 127.0.0.1 for the transport's tests, over TLS with a certificate of a
/// ``TestCertificateAuthority`` or in the clear, or a CONNECT proxy: Python's `ssl` module, started by the test.
///
/// Every reply is the same scripted one; connections stay open for the next request (keep-alive), so that a
/// test can count the TCP connections a client made. `events` lists what happened, one line each:
/// `CONNECTION`, `REQUEST POST /path host cookie=no`, `CONNECT host:port`, `HANDSHAKE-FAILED`.
public final class TLSTestServer: Sendable {
    /// What the server answers and how.
    public struct Settings: Sendable {
        public var status = 200
        public var body = #"{"status_code":200,"status_message":"OK","response":{"flags":[]}}"#
        public var headers: [(String, String)] = []
        /// Never answer.
        public var hang = false
        /// Answer with this many bytes of body instead.
        public var hugeBody = 0
        /// Be a CONNECT proxy instead of a server.
        public var proxy = false

        public init() {}
    }

    public let port: UInt16
    private let process: Process
    private let directory: TemporaryDirectory

    /// Starts a server; TLS with `certificate` (from `authority`) when given, plain otherwise.
    public static func start(
        _ settings: Settings = Settings(), certificate: TestCertificateAuthority.Certificate? = nil
    ) throws -> TLSTestServer {
        let directory = try TemporaryDirectory(prefix: "pwtls")
        var members: [String: JSONValue] = [
            "events": .string(directory.file("events")), "portFile": .string(directory.file("port")),
            "status": .number(Double(settings.status)), "body": .string(settings.body),
            "headers": .array(settings.headers.map { .array([.string($0.0), .string($0.1)]) }),
            "hang": .bool(settings.hang), "huge": .number(Double(settings.hugeBody)), "proxy": .bool(settings.proxy),
        ]
        if let certificate {
            members["cert"] = .string(certificate.certificatePath)
            members["key"] = .string(certificate.keyPath)
        }
        try directory.write("events", "")
        var json: [UInt8] = []
        JSONValue.object(members).write(to: &json)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, String(decoding: json, as: UTF8.self)]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var port: UInt16?
        _ = Eventually.blockingWait(timeout: .seconds(20)) {
            port = (try? String(contentsOfFile: directory.file("port"), encoding: .utf8)).flatMap { UInt16($0) }
            return port != nil || !process.isRunning
        }
        guard let port else {
            kill(process.processIdentifier, SIGKILL)
            throw Command.Failure(description: "the TLS test server did not start")
        }
        return TLSTestServer(port: port, process: process, directory: directory)
    }

    private init(port: UInt16, process: Process, directory: TemporaryDirectory) {
        self.port = port
        self.process = process
        self.directory = directory
    }

    /// What happened so far, one line per event.
    public var events: [String] {
        ((try? String(contentsOfFile: directory.file("events"), encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }

    /// The events starting with `prefix`, once at least `count` of them happened (or after 10 s).
    public func events(_ prefix: String, atLeast count: Int) -> [String] {
        var matching: [String] = []
        _ = Eventually.blockingWait {
            matching = events.filter { $0.hasPrefix(prefix) }
            return matching.count >= count
        }
        return matching
    }

    /// `https://localhost:{port}/json/1.3/` (or `http://` for a plain server).
    public func base(tls: Bool = true, host: String = "localhost") -> URL {
        URL(string: "\(tls ? "https" : "http")://\(host):\(port)/json/1.3/") ?? URL(fileURLWithPath: "/")
    }

    public func stop() {
        // SIGKILL: the child may have inherited a mask that blocks SIGTERM (see RunningCLI.stop).
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        directory.remove()
    }

    deinit {
        stop()
    }
}

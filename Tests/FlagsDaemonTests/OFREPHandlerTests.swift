import FlagsCore
import Foundation
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// The OFREP handler on its own event engine in the test process, served from a store the test changes: what it
/// adds to the responder (answers kept in order on a connection, the latest snapshot, the ETag that moves with
/// it, the token on TCP only, a closed connection after a refusal, 503 past the connection limit). No daemon.
@Suite(.hangLimit) struct OFREPHandlerTests {
    static let flags = FlagSet([
        Flag(key: "a", isEnabled: true, ruleId: "r1", properties: ["color": "green"]),
        Flag(key: "b", isEnabled: false, ruleId: "r2"),
    ])

    /// An OFREP handler on its event engine, over a Unix socket (or loopback TCP) and `store`, until `stop()`.
    ///
    /// The engine runs on the process's event loop, started here as `OFREPServer.run()` starts it, so that it
    /// serves even while the test's blocking clients hold every thread of the cooperative pool.
    final class Serving {
        let directory: TemporaryDirectory
        let store: FlagStore
        let engine: EventEngine<OFREPHandler>
        let ended = DispatchSemaphore(value: 0)
        /// The socket file, on a Unix socket.
        let path: String
        /// The port, on TCP.
        let port: UInt16?

        init(tcp: Bool = false, token: String? = nil, limits: OFREPLimits = OFREPLimits()) throws {
            directory = try TemporaryDirectory()
            let store = FlagStore()
            store.replace(with: OFREPHandlerTests.flags)
            self.store = store
            path = directory.file("ofrep.sock")
            let fd =
                tcp ? try InetSocket.listen(host: "127.0.0.1", port: 0) : try UnixSocket.listen(at: path, mode: 0o600)
            port = tcp ? InetSocket.localPort(fd) : nil
            let logger = Logger(level: .err)
            engine = try EventEngine(listenFD: fd, share: ConnectionShare(), logger: logger, logPrefix: "OFREP: ") {
                doorbell in
                OFREPHandler(
                    doorbell: doorbell, listenFD: fd, isTCP: tcp, store: store, token: token.map { Array($0.utf8) },
                    allowedOrigins: [], limits: limits, logger: logger, metrics: DaemonMetrics(),
                    evaluations: EvaluationTally())
            }
            let ended = self.ended
            engine.start { ended.signal() }
        }

        func client() throws -> HTTPClient {
            if let port { return try HTTPClient(port: port) }
            return try HTTPClient(unixSocket: path)
        }

        /// Stops the engine (it flushes what is queued, at most a second) and waits for its thread to end.
        func stop() {
            engine.handler.stop()
            ended.wait()
            directory.remove()
        }
    }

    @Test func theBulkAnswerHasAnETagThatAnswers304UntilTheFlagsChange() async throws {
        let serving = try Serving()
        let client = try serving.client()
        let first = try #require(client.post("/ofrep/v1/evaluate/flags"))
        #expect(first.status == 200)
        let etag = try #require(first.headers["etag"])
        // A flag and each of its properties: `a`, `a.color`, `b`.
        #expect(first.json?["flags"]?.arrayValue?.count == 3)
        let same = try #require(client.post("/ofrep/v1/evaluate/flags", headers: ["If-None-Match: \(etag)"]))
        #expect(same.status == 304 && same.body.isEmpty)
        serving.store.replace(with: FlagSet([Flag(key: "c", isEnabled: true, ruleId: "r3")]))
        // The handler hears of the change through its doorbell: the next answers move to the new snapshot.
        var latest: HTTPClient.Response?
        #expect(
            await Eventually.wait {
                latest = client.post("/ofrep/v1/evaluate/flags", headers: ["If-None-Match: \(etag)"])
                return latest?.status == 200
            })
        #expect(latest?.headers["etag"] != etag)
        #expect(latest?.json?["flags"]?.arrayValue?.first?["key"] == "c")
        serving.stop()
    }

    @Test func pipelinedRequestsAreAnsweredInOrderOnOneConnection() async throws {
        let serving = try Serving()
        let client = try serving.client()
        let requests = ["a", "zz", "b"].map { HTTPClient.post("/ofrep/v1/evaluate/flags/" + $0) }
        #expect(client.send(requests.joined()))
        let answers = (0..<3).compactMap { _ in client.readResponse() }
        try #require(answers.count == 3, "\(answers.map(\.status)) \(answers.map(\.text))")
        #expect(answers.map(\.status) == [200, 404, 200])
        #expect(answers.first?.json?["key"] == "a")
        #expect(answers.last?.json?["value"] == false)
        #expect(answers[1].json?["errorCode"] == "FLAG_NOT_FOUND")
        serving.stop()
    }

    @Test func aRequestThatCannotBeParsedGetsItsErrorAndTheConnectionCloses() async throws {
        let serving = try Serving()
        let client = try serving.client()
        #expect(client.send("POST /ofrep/v1/evaluate/flags HTTP/1.1\r\nno colon in this field\r\n\r\n"))
        let answer = try #require(client.readResponse())
        #expect(answer.status == 400)
        #expect(answer.headers["connection"] == "close")
        #expect(client.isClosedByPeer())
        // Everyone else is still served.
        #expect(try serving.client().post("/ofrep/v1/evaluate/flags")?.status == 200)
        serving.stop()
    }

    @Test func onTCPTheTokenIsAskedAndAClientWithoutItIsClosed() async throws {
        let token = "0123456789abcdef0123456789abcdef"
        let serving = try Serving(tcp: true, token: token)
        let guesser = try serving.client()
        let refused = try #require(guesser.post("/ofrep/v1/evaluate/flags", headers: ["Authorization: Bearer wrong"]))
        #expect(refused.status == 401)
        #expect(guesser.isClosedByPeer())
        let client = try serving.client()
        #expect(client.post("/ofrep/v1/evaluate/flags", headers: ["Authorization: Bearer \(token)"])?.status == 200)
        #expect(client.post("/ofrep/v1/evaluate/flags/a", headers: ["X-API-Key: \(token)"])?.status == 200)
        serving.stop()
    }

    @Test func onAUnixSocketNoTokenIsAsked() async throws {
        let serving = try Serving(token: "0123456789abcdef0123456789abcdef")
        #expect(try serving.client().post("/ofrep/v1/evaluate/flags")?.status == 200)
        serving.stop()
    }

    @Test func pastTheConnectionLimitAClientGets503AndIsClosed() async throws {
        let serving = try Serving(limits: OFREPLimits(maxConnections: 1))
        let first = try serving.client()
        // Answered: the engine has taken the first connection before the second arrives.
        #expect(first.post("/ofrep/v1/evaluate/flags")?.status == 200)
        let second = try serving.client()
        let refused = try #require(second.readResponse())
        #expect(refused.status == 503 && refused.headers["retry-after"] == "1")
        #expect(second.isClosedByPeer())
        #expect(first.post("/ofrep/v1/evaluate/flags/a")?.status == 200)
        serving.stop()
    }
}

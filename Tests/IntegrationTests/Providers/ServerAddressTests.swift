import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Where requests go and what they carry: the R16 URL rule, the API token, `base_url` with `ServerURL` set.
@Suite(.hangLimit) struct ServerAddressTests {
    @Test("R16: a ServerURL not ending in json/1.3/ sends nothing; get is null, refresh fails with status 0")
    func r16BadServerURL() async throws {
        let rig = try PushwooshRig.start(
            daemon: { try Fixtures.daemon($0, serverURL: "http://127.0.0.1:\($0.port)/json/1.2/") },
            replies: { $0.setDefaultReply(.flags([Fixtures.checkout])) })
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try session.get("new_checkout")?.isNull == true)
        let answer = try #require(try session.call("refresh"))
        #expect(answer["error"]?["code"]?.integerValue == -32000)
        #expect(answer["error"]?["data"]?["status"]?.integerValue == 0)
        #expect(answer["error"]?["data"]?["domain"]?.stringValue == "PWFeatureFlagsErrorDomain")
        #expect(try session.result("pushRegistered")?["refreshStarted"]?.boolValue == false)
        _ = try session.result("setUserId", ["userId": "alice"])
        let status = try session.result("status")
        let problem = try #require(status?["problem"]?.stringValue)
        #expect(problem.contains("json/1.3/"))
        #expect(status?["nextRefreshAt"]?.isNull == true)
        #expect(daemon.log.contains("json/1.3/"))
        #expect(try session.get("new_checkout")?.isNull == true)
        // Every trigger went by: the session start, refresh, pushRegistered, setUserId. None reached the server.
        #expect(server.requests.isEmpty)
    }

    @Test("An APITokenFile that is a silent FIFO delays the start by its bounded wait, then requests go without it")
    func apiTokenFileThatIsASilentFIFO() async throws {
        let tokens = try TemporaryDirectory()
        let path = tokens.file("token")
        try #require(mkfifo(path, 0o600) == 0)
        // Held open for writing, silent: a blocking read of the token would wait for ever, and READY never come.
        let writer = open(path, O_RDWR | O_CLOEXEC)
        try #require(writer >= 0)
        defer {
            close(writer)
            tokens.remove()
        }
        let rig = try PushwooshRig.start(pushwoosh: ["APITokenFile": path])
        defer { rig.stop() }
        let requests = try await rig.server.waitForRequests(count: 1)
        #expect(requests[0].header("Authorization") == nil)
        #expect(rig.daemon.log.contains("cannot read the API token file"))
    }

    @Test("An APITokenFile over 4096 bytes is refused, named in the log without its contents; requests go without")
    func anOversizedAPITokenFileIsRefused() async throws {
        let tokens = try TemporaryDirectory()
        defer { tokens.remove() }
        try tokens.write("token", String(repeating: "s3cr3t-T0KEN-", count: 400))
        let rig = try PushwooshRig.start(pushwoosh: ["APITokenFile": tokens.file("token")])
        defer { rig.stop() }
        let requests = try await rig.server.waitForRequests(count: 1)
        #expect(requests[0].header("Authorization") == nil)
        let log = rig.daemon.log
        #expect(log.contains("cannot read the API token file"), "log:\n\(log)")
        #expect(log.contains("larger than 4096 bytes"), "log:\n\(log)")
        #expect(!log.contains("s3cr3t"))
    }

    @Test("The request carries Authorization: Token from APITokenFile; the token is in neither the log nor status")
    func apiTokenSentNeverShown() async throws {
        let tokens = try TemporaryDirectory()
        let token = "s3cr3t-T0KEN-9f8e7d"
        try tokens.write("token", token + "\n")
        let rig = try PushwooshRig.start(
            daemon: {
                try DaemonProcess(
                    config: PushwooshConfig.text(
                        serverURL: $0.baseURL.absoluteString, pushwoosh: ["APITokenFile": tokens.file("token")])
                        + "[Daemon]\nLogLevel=debug\n")
            },
            replies: { $0.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags") })
        defer {
            rig.stop()
            tokens.remove()
        }
        let (server, daemon) = (rig.server, rig.daemon)
        let requests = try await server.waitForRequests(count: 1)
        #expect(requests[0].header("Authorization") == "Token \(token)")
        #expect(!requests[0].body.isEmpty)
        #expect(!String(decoding: requests[0].body, as: UTF8.self).contains(token))
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let status = try #require(try session.call("status"))
        #expect(!status.serialized().contains(token))
        daemon.stop()
        #expect(!daemon.log.contains(token))
        #expect(!daemon.log.isEmpty)
    }

    @Test("Without a token file no Authorization header is sent")
    func noTokenNoAuthorization() async throws {
        let rig = try PushwooshRig.start(replies: { _ in })
        defer { rig.stop() }
        let server = rig.server
        let requests = try await server.waitForRequests(count: 1)
        #expect(requests[0].header("Authorization") == nil)
    }

    @Test("With ServerURL set, base_url in a reply is ignored: later requests still go to ServerURL")
    func baseURLIgnoredWithServerURL() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["DisableThrottle": "yes"]) { server in
            server.enqueue(
                .flags([Fixtures.checkout], baseURL: "http://127.0.0.1:9/json/1.3/"), for: "getFeatureFlags")
            server.setDefaultReply(.flags([Fixtures.search]), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let answer = try session.result("refresh")
        #expect(answer?["fromNetwork"]?.boolValue == true)
        #expect(try session.get("search_v2")?.isNull == false)
        let requests = try await server.waitForRequests(count: 2)
        #expect(requests[1].path == "/json/1.3/getFeatureFlags")
        #expect(!FileManager.default.fileExists(atPath: daemon.directory.file("state/base-url")))
    }
}

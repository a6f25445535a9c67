import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The disk cache across restarts (R7, R13): whose flags it holds, how long, and what is never written.
@Suite(.hangLimit) struct DiskCacheTests {
    /// Runs a first daemon until its complete response is on disk, then stops it; returns its directory.
    func cacheFirst(
        _ server: FakePushwooshServer,
        flags: [Flag] = [Fixtures.checkout],
        featureFlags: [String: String] = [:]
    ) async throws -> TemporaryDirectory {
        server.enqueue(.flags(flags), for: "getFeatureFlags")
        let first = try Fixtures.daemon(server, featureFlags: featureFlags)
        let session = try SocketSession(socketPath: first.socketPath)
        _ = try await server.waitForRequests(count: 1)
        #expect(try await Fixtures.waitForFlag(flags[0].key, on: session))
        #expect(await Eventually.wait { Fixtures.cacheText(first)?.contains(flags[0].key) == true })
        first.stop()
        return first.directory
    }

    @Test("R7: after a restart a fresh cache is served before any request is answered")
    func r7FreshCacheServedAtRestart() async throws {
        let server = try PushwooshRig.server()
        let directory = try await cacheFirst(server)
        server.setDefaultReply(.hang, for: "getFeatureFlags")
        let second = try Fixtures.daemon(server, directory: directory)
        defer {
            server.stop()
            second.cleanUp()
        }
        let session = try SocketSession(socketPath: second.socketPath)
        let flag = try session.get("new_checkout")
        #expect(flag?["ruleId"]?.stringValue == "r_1a2b3c4d")
        #expect(flag?["properties"]?["button_color"]?.stringValue == "green")
        // The second daemon's own request is still unanswered.
        _ = try await server.waitForRequests(count: 2)
        #expect(try session.get("new_checkout")?.isNull == false)
    }

    @Test("R7: a cache older than CacheMaxAge is not served after a restart")
    func r7StaleCacheNotServed() async throws {
        let server = try PushwooshRig.server()
        // Written with a long CacheMaxAge, so that the first daemon keeps it; the restart uses a short one.
        let directory = try await cacheFirst(server)
        let cachePath = directory.file("state/flags-cache.json")
        try #require(FileManager.default.fileExists(atPath: cachePath))
        // The rule is about age itself: the cache is made two seconds older, on both of its clocks, than the
        // first daemon wrote it, past the second daemon's CacheMaxAge of one second.
        try CacheFile.age(cachePath, by: 2)
        server.setDefaultReply(.hang, for: "getFeatureFlags")
        let second = try Fixtures.daemon(server, featureFlags: ["CacheMaxAge": "1s"], directory: directory)
        defer {
            server.stop()
            second.cleanUp()
        }
        let session = try SocketSession(socketPath: second.socketPath)
        #expect(try session.get("new_checkout")?.isNull == true)
        #expect(second.log.contains("past CacheMaxAge"))
    }

    @Test("R7: a daemon started with another application code does not see the cache")
    func r7OtherApplicationCode() async throws {
        let server = try PushwooshRig.server()
        let directory = try await cacheFirst(server)
        server.setDefaultReply(.hang, for: "getFeatureFlags")
        let second = try Fixtures.daemon(server, applicationCode: "FGHIJ-67890", directory: directory)
        defer {
            server.stop()
            second.cleanUp()
        }
        let session = try SocketSession(socketPath: second.socketPath)
        #expect(try session.get("new_checkout")?.isNull == true)
        let requests = try await server.waitForRequests(count: 2)
        #expect(requests[1].requestObject?["application"]?.stringValue == "FGHIJ-67890")
    }

    @Test("R7: another user (UserID) does not see the cache")
    func r7OtherUserFromConfiguration() async throws {
        let server = try PushwooshRig.server()
        let directory = try await cacheFirst(server)
        server.setDefaultReply(.hang, for: "getFeatureFlags")
        let second = try Fixtures.daemon(server, pushwoosh: ["UserID": "someone-else"], directory: directory)
        defer {
            server.stop()
            second.cleanUp()
        }
        let session = try SocketSession(socketPath: second.socketPath)
        #expect(try session.get("new_checkout")?.isNull == true)
    }

    @Test("R7: another user set with setUserId does not see the cache, after a restart either")
    func r7OtherUserFromSocket() async throws {
        let server = try PushwooshRig.server()
        server.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        server.setDefaultReply(.hang, for: "getFeatureFlags")
        let first = try Fixtures.daemon(server)
        let session = try SocketSession(socketPath: first.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(try session.result("setUserId", ["userId": "alice"])?["userId"]?.stringValue == "alice")
        #expect(try session.get("new_checkout")?.isNull == true)
        server.stop()
        let second = try PushwooshRig.restart(first, on: try PushwooshRig.server())
        defer { second.stop() }
        let again = try second.session()
        #expect(try again.get("new_checkout")?.isNull == true)
    }

    @Test("R7: a corrupt cache file is ignored and logged, and the daemon still starts")
    func r7CorruptCacheIgnored() async throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.file("state"), withIntermediateDirectories: true)
        let garbage = #"{"format":1,"applicationCode":"ABCDE-12345",garbage"#
        try Data(garbage.utf8).write(to: URL(fileURLWithPath: directory.file("state/flags-cache.json")))
        let rig = try PushwooshRig.start(directory: directory) {
            $0.setDefaultReply(.hang, for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let daemon = rig.daemon
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try session.get("new_checkout")?.isNull == true)
        #expect(daemon.log.contains("corrupt"))
    }

    @Test("R13: a partial response is served but not written to the disk cache")
    func r13PartialNotCached() async throws {
        let server = try PushwooshRig.server()
        server.enqueue(.flags([Fixtures.checkout], partial: true), for: "getFeatureFlags")
        let first = try Fixtures.daemon(server)
        let session = try SocketSession(socketPath: first.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(try session.result("status")?["partial"]?.boolValue == true)
        #expect(Fixtures.cacheText(first) == nil)
        let second = try PushwooshRig.restart(first, on: server)
        defer { second.stop() }
        let again = try second.session()
        #expect(try again.get("new_checkout")?.isNull == true)
    }

    @Test("R13: after a partial response the previous complete cache is what a restart serves")
    func r13PartialKeepsPreviousCache() async throws {
        let server = try PushwooshRig.server()
        server.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        server.enqueue(.flags([Fixtures.search], partial: true), for: "getFeatureFlags")
        let first = try Fixtures.daemon(server)
        let session = try SocketSession(socketPath: first.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(await Eventually.wait { Fixtures.cacheText(first) != nil })
        #expect(try session.result("pushRegistered")?["refreshStarted"]?.boolValue == true)
        #expect(try await Fixtures.waitForFlag("search_v2", on: session))
        #expect(try session.get("new_checkout")?.isNull == true)
        let second = try PushwooshRig.restart(first, on: server)
        defer { second.stop() }
        let again = try second.session()
        #expect(try again.get("new_checkout")?.isNull == false)
        #expect(try again.get("search_v2")?.isNull == true)
    }

    @Test("A user id set over the socket survives a restart")
    func userIdSurvivesRestart() async throws {
        let server = try PushwooshRig.server()
        let first = try Fixtures.daemon(server)
        let session = try SocketSession(socketPath: first.socketPath)
        #expect(try session.result("setUserId", ["userId": "bob"])?["userId"]?.stringValue == "bob")
        first.stop()
        // The first daemon is gone: the next request is the restarted daemon's session start.
        let before = server.requests.count
        let second = try Fixtures.daemon(server, directory: first.directory)
        defer {
            server.stop()
            second.cleanUp()
        }
        let again = try SocketSession(socketPath: second.socketPath)
        #expect(try again.result("status")?["userId"]?.stringValue == "bob")
        let requests = try await server.waitForRequests(count: before + 1)
        #expect(requests[before].requestObject?["userId"]?.stringValue == "bob")
    }
}

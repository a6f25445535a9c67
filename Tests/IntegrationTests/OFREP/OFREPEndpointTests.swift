import FlagsCore
import Foundation
import TestSupport
import Testing

/// The OFREP endpoints against the real daemon with a plain HTTP client: bulk and single evaluation, 304 and
/// a new ETag after a change, the token on TCP, OFREP's error answers, 429.
@Suite(.hangLimit) struct OFREPEndpointTests {
    @Test func bulkEvaluatesEveryFlagAndPropertyOverTheUnixSocket() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let answer = try #require(try rig.post(OFREPRig.bulk, body: #"{"context":{"targetingKey":"user-1"}}"#))
        #expect(answer.status == 200)
        #expect(answer.headers["content-type"] == "application/json")
        #expect(answer.headers["etag"]?.hasPrefix("\"") == true)
        let flags = try #require(answer.json?["flags"]?.arrayValue)
        let byKey = Dictionary(
            uniqueKeysWithValues: flags.compactMap { flag in flag["key"]?.stringValue.map { ($0, flag) } })
        #expect(byKey["new_checkout"]?["value"] == true)
        #expect(byKey["new_checkout"]?["reason"] == "TARGETING_MATCH")
        #expect(byKey["new_checkout"]?["variant"] == "r_1a2b3c4d")
        #expect(byKey["banner"]?["reason"] == "DEFAULT")
        #expect(byKey["old_search"]?["reason"] == "DISABLED")
        #expect(byKey["new_checkout.button_color"]?["value"] == "green")
        #expect(byKey["new_checkout.layout"]?["value"] == ["columns": 2])
        #expect(flags.count == 3 + 4)
    }

    @Test func singleEvaluatesOneKeyAndKeepsTheConnectionOpen() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let client = try rig.client()
        let first = try #require(client.post(OFREPRig.single("new_checkout.max_items")))
        #expect(first.status == 200)
        #expect(first.json?["value"] == 3)
        #expect(first.json?["key"] == "new_checkout.max_items")
        let second = try #require(client.post(OFREPRig.single("new_checkout.discount"), body: ""))
        #expect(second.json?["value"] == 0.15)
    }

    @Test func anAbsentKeyIs404FlagNotFound() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let answer = try #require(try rig.post(OFREPRig.single("no_such_flag")))
        #expect(answer.status == 404)
        #expect(answer.json?["errorCode"] == "FLAG_NOT_FOUND")
        #expect(answer.json?["key"] == "no_such_flag")
    }

    @Test func badJSONIs400ParseErrorAndTheConnectionStaysUsable() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let client = try rig.client()
        let bulk = try #require(client.post(OFREPRig.bulk, body: "{\"context\":"))
        #expect(bulk.status == 400)
        #expect(bulk.json?["errorCode"] == "PARSE_ERROR")
        let single = try #require(client.post(OFREPRig.single("banner"), body: #"{"context":"me"}"#))
        #expect(single.status == 400)
        #expect(single.json?["errorCode"] == "INVALID_CONTEXT")
        #expect(single.json?["key"] == "banner")
        #expect(client.post(OFREPRig.single("banner"))?.status == 200)
    }

    @Test func bulkAnswers304WhileNothingChangedAndANewETagAfterAChange() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let client = try rig.client()
        let first = try #require(client.post(OFREPRig.bulk))
        let tag = try #require(first.headers["etag"])
        let again = try #require(client.post(OFREPRig.bulk, headers: ["If-None-Match: \(tag)"]))
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.headers["etag"] == tag)

        var changed = OFREPRig.checkout
        changed.properties["button_color"] = "red"
        try rig.daemon.writeFlags([changed, OFREPRig.banner, OFREPRig.killed])
        // The line protocol's refresh re-reads the file at once; after it OFREP must see the change too.
        _ = try rig.daemon.connect().call("refresh")
        let after = try #require(client.post(OFREPRig.bulk, headers: ["If-None-Match: \(tag)"]))
        #expect(after.status == 200)
        let newTag = try #require(after.headers["etag"])
        #expect(newTag != tag)
        let color = after.json?["flags"]?.arrayValue?.first { $0["key"] == "new_checkout.button_color" }
        #expect(color?["value"] == "red")
        #expect(client.post(OFREPRig.bulk, headers: ["If-None-Match: \(newTag)"])?.status == 304)
    }

    @Test func aLocalOverrideReadsAsStaticWithItsSourceAndChangesTheETag() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let client = try rig.client()
        let before = try #require(client.post(OFREPRig.bulk))
        let session = try SocketSession(socketPath: rig.daemon.socketPath)
        _ = try #require(try session.result("setOverride", ["key": "banner", "enabled": true]))
        let single = try #require(client.post(OFREPRig.single("banner")))
        #expect(single.json?["value"] == true)
        #expect(single.json?["reason"] == "STATIC")
        #expect(single.json?["metadata"]?["source"] == "override")
        let after = try #require(
            client.post(OFREPRig.bulk, headers: ["If-None-Match: \(before.headers["etag"] ?? "")"]))
        #expect(after.status == 200)
        #expect(after.headers["etag"] != before.headers["etag"])
    }

    @Test func tcpWantsTheTokenByEitherHeader() throws {
        let rig = try OFREPRig(tcp: true)
        defer { rig.cleanUp() }
        let missing = try #require(try rig.client().post(OFREPRig.bulk))
        #expect(missing.status == 401)
        #expect(missing.json?["errorDetails"]?.stringValue != nil)
        #expect(try rig.client().post(OFREPRig.bulk, headers: ["Authorization: Bearer wrong"])?.status == 401)
        #expect(try rig.client().post(OFREPRig.bulk, headers: ["X-API-Key: wrong"])?.status == 401)
        let client = try rig.client()
        #expect(client.post(OFREPRig.bulk, headers: ["Authorization: Bearer \(OFREPRig.token)"])?.status == 200)
        #expect(client.post(OFREPRig.single("banner"), headers: ["X-API-Key: \(OFREPRig.token)"])?.status == 200)
        #expect(!rig.daemon.log.contains(OFREPRig.token))
    }

    @Test func aClientPollingTooFastGets429WithRetryAfter() throws {
        let rig = try OFREPRig(extra: "RequestRate=3\n")
        defer { rig.cleanUp() }
        let client = try rig.client()
        var statuses: [Int] = []
        var retryAfter: String?
        for _ in 0..<10 {
            let answer = try #require(client.post(OFREPRig.bulk))
            statuses.append(answer.status)
            if answer.status == 429 { retryAfter = answer.headers["retry-after"] }
        }
        #expect(statuses.prefix(3).allSatisfy { $0 == 200 })
        #expect(statuses.contains(429))
        let seconds = try #require(retryAfter.flatMap { Int($0) })
        #expect(seconds >= 1)
        // The line protocol is not limited by OFREP's rule.
        #expect(try rig.daemon.connect().call("get", ["key": "banner"])?["result"] != nil)
    }

    @Test func ofrepAndTheLineProtocolServeTheSameFlags() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let listing = try rig.daemon.connect().listing("getAll")
        let answer = try #require(try rig.post(OFREPRig.bulk))
        let ofrep = try #require(answer.json?["flags"]?.arrayValue)
        for flag in listing.flags {
            let evaluation = ofrep.first { $0["key"]?.stringValue == flag.key }
            #expect(evaluation?["value"]?.boolValue == flag.isEnabled, "\(flag.key)")
            for (name, value) in flag.properties {
                #expect(ofrep.first { $0["key"]?.stringValue == flag.key + "." + name }?["value"] == value)
            }
        }
    }

    @Test func anEmptyTokenFileTurnsOFREPOffAndTheLineProtocolStillServes() throws {
        let directory = try TemporaryDirectory()
        try directory.write(LocalFlags.fileName, LocalFlags.text(OFREPRig.flags))
        try directory.write("empty-token", "\n")
        let extra = "[OFREP]\nListenAddress=127.0.0.1:0\nTokenFile=\(directory.file("empty-token"))\n"
        let daemon = try DaemonProcess(config: LocalFlags.config(in: directory, extra: extra), directory: directory)
        defer { daemon.cleanUp() }
        #expect(daemon.log.contains("OFREP is off"), "\(daemon.log)")
        #expect(!daemon.log.contains("OFREP listening"))
        #expect(try daemon.connect().call("get", ["key": "banner"])?["result"]?["flag"]?["key"] == "banner")
    }

    @Test func expectContinueGets100BeforeTheBodyIsSent() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let client = try rig.client()
        let body = #"{"context":{"targetingKey":"user-1"}}"#
        client.send(
            "POST \(OFREPRig.single("banner")) HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n")
        #expect(client.readResponse(interim: true)?.status == 100)
        client.send(body)
        let answer = client.readResponse()
        #expect(answer?.status == 200)
        #expect(answer?.json?["key"] == "banner")
    }
}

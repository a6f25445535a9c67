import FlagsCore
import Foundation
import TestSupport
import Testing

/// `[OFREP] AllowedOrigins=`: a page from a listed origin may read the listener from a browser; every other
/// origin gets no CORS field, and the token stays required for every real request.
@Suite(.hangLimit) struct OFREPCORSTests {
    static let allowed = "http://127.0.0.1:8080"

    private func rig() throws -> OFREPRig {
        try OFREPRig(tcp: true, extra: "AllowedOrigins=\(Self.allowed) https://kiosk.local\n")
    }

    private static func preflight(origin: String, path: String = OFREPRig.bulk) -> String {
        "OPTIONS \(path) HTTP/1.1\r\nHost: localhost\r\nOrigin: \(origin)\r\n"
            + "Access-Control-Request-Method: POST\r\n"
            + "Access-Control-Request-Headers: authorization,content-type,if-none-match\r\n\r\n"
    }

    @Test func aPreflightFromAnAllowedOriginIsAnsweredWithoutTheTokenAndTellsNothing() throws {
        let rig = try rig()
        defer { rig.cleanUp() }
        var answers: [HTTPClient.Response] = []
        for path in [
            OFREPRig.bulk, OFREPRig.single("new_checkout"), OFREPRig.single("no_such_flag"), "/elsewhere",
            "/ofrep/v1/events?channel=0123",
        ] {
            let client = try rig.client()
            client.send(Self.preflight(origin: Self.allowed, path: path))
            let answer = try #require(client.readResponse())
            #expect(answer.status == 204, "\(path)")
            #expect(answer.headers["access-control-allow-origin"] == Self.allowed)
            #expect(answer.headers["vary"] == "Origin")
            #expect(answer.headers["access-control-allow-methods"] == "GET, POST")
            let allowedHeaders = Set(
                (answer.headers["access-control-allow-headers"] ?? "").lowercased().split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                })
            #expect(allowedHeaders == ["authorization", "x-api-key", "content-type", "if-none-match", "last-event-id"])
            #expect(Int(answer.headers["access-control-max-age"] ?? "") == 600)
            #expect(answer.body.isEmpty && answer.headers["content-length"] == nil)
            #expect(answer.headers["etag"] == nil)
            answers.append(answer)
        }
        // The same answer whatever the path: a preflight reveals no flag and no endpoint.
        #expect(answers.allSatisfy { $0.headers == answers[0].headers })
        try rig.expectStillServing()
    }

    @Test func anAllowedOriginReadsEveryAnswerAndTheETagButStillNeedsTheToken() throws {
        let rig = try rig()
        defer { rig.cleanUp() }
        let origin = "Origin: \(Self.allowed)"
        let ok = try #require(try rig.post(OFREPRig.bulk, headers: [origin]))
        #expect(ok.status == 200)
        #expect(ok.headers["access-control-allow-origin"] == Self.allowed)
        #expect(ok.headers["access-control-expose-headers"]?.contains("ETag") == true)
        #expect(ok.headers["vary"] == "Origin")
        let tag = try #require(ok.headers["etag"])
        let unchanged = try #require(try rig.post(OFREPRig.bulk, headers: [origin, "If-None-Match: \(tag)"]))
        #expect(unchanged.status == 304)
        #expect(unchanged.headers["access-control-allow-origin"] == Self.allowed)
        // Without the token the browser may read the refusal, not the flags.
        let client = try rig.client()
        let refused = try #require(client.post(OFREPRig.bulk, headers: [origin]))
        #expect(refused.status == 401)
        #expect(refused.headers["access-control-allow-origin"] == Self.allowed)
        #expect(!refused.text.contains("new_checkout"))
        // A preflight does not stand for the token: the real request after it on the same connection is refused.
        let reused = try rig.client()
        reused.send(Self.preflight(origin: Self.allowed))
        #expect(reused.readResponse()?.status == 204)
        #expect(reused.post(OFREPRig.bulk, headers: [origin])?.status == 401)
    }

    @Test(arguments: ["http://evil.example", "http://127.0.0.1:8081", "HTTP://127.0.0.1:8080", "null", "*"])
    func anyOtherOriginGetsNoCORSFieldAndAPreflightNeedsTheToken(origin: String) throws {
        let rig = try rig()
        defer { rig.cleanUp() }
        let client = try rig.client()
        client.send(Self.preflight(origin: origin))
        let preflight = try #require(client.readResponse())
        #expect(preflight.status == 401)
        #expect(preflight.headers.keys.filter { $0.hasPrefix("access-control-") }.isEmpty)
        let answer = try #require(try rig.post(OFREPRig.bulk, headers: ["Origin: \(origin)"]))
        #expect(answer.status == 200)
        #expect(answer.headers.keys.filter { $0.hasPrefix("access-control-") }.isEmpty)
    }

    @Test func withoutAllowedOriginsNoAnswerCarriesACORSField() throws {
        let rig = try OFREPRig(tcp: true)
        defer { rig.cleanUp() }
        let client = try rig.client()
        client.send(Self.preflight(origin: Self.allowed))
        let preflight = try #require(client.readResponse())
        #expect(preflight.status == 401)
        let answer = try #require(try rig.post(OFREPRig.bulk, headers: ["Origin: \(Self.allowed)"]))
        #expect(answer.status == 200)
        #expect(answer.headers.keys.filter { $0.hasPrefix("access-control-") || $0 == "vary" }.isEmpty)
    }

    @Test func preflightsAloneDoNotHoldSlotsAgainstTheToken() throws {
        let rig = try OFREPRig(
            tcp: true, extra: "AllowedOrigins=\(Self.allowed)\nConnectionLimit=3\nIdleTimeout=5s\n")
        defer { rig.cleanUp() }
        var holders: [HTTPClient] = []
        for _ in 0..<3 {
            let holder = try rig.client()
            holder.send(Self.preflight(origin: Self.allowed))
            #expect(holder.readResponse()?.status == 204)
            holders.append(holder)
        }
        let client = try rig.client()
        #expect(client.post(OFREPRig.single("banner"), headers: rig.authorization)?.status == 200)
        _ = holders
    }

    @Test func checkConfigShowsTheOriginsAndRefusesAWildcard() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write(
            "good.conf", "[OFREP]\nAllowedOrigins=\(Self.allowed)  https://kiosk.local\n")
        let good = try Command.run(
            DaemonProcess.executable("pwflagsd"), ["--check-config", "--config", directory.file("good.conf")],
            check: false)
        #expect(good.status == 0, "\(good)")
        #expect(good.stdout.contains("AllowedOrigins=\(Self.allowed) https://kiosk.local"))
        try directory.write("bad.conf", "[OFREP]\nAllowedOrigins=* http://x/\n")
        let bad = try Command.run(
            DaemonProcess.executable("pwflagsd"), ["--check-config", "--config", directory.file("bad.conf")],
            check: false)
        #expect(bad.status != 0)
        #expect((bad.stdout + bad.stderr).contains("invalid origins '*', 'http://x/' for AllowedOrigins"))
    }
}

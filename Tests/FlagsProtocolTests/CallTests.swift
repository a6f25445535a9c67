import FlagsCore
import FlagsProtocol
import TestSupport
import Testing

/// `Call(method:params:)`: every method (docs/protocol.md), and the errors for unknown methods and bad params.
@Suite(.hangLimit) struct CallTests {
    static let valid: [(String, [String: JSONValue], Call)] = [
        ("get", ["key": "a"], .get(key: "a")),
        ("getAll", [:], .getAll),
        ("isEnabled", ["key": "a"], .isEnabled(key: "a", default: false)),
        ("isEnabled", ["key": "a", "default": true], .isEnabled(key: "a", default: true)),
        ("isEnabled", ["key": "a", "default": nil], .isEnabled(key: "a", default: false)),
        ("refresh", [:], .refresh),
        ("listen", [:], .listen(keys: nil)),
        ("listen", ["keys": ["a", "b"]], .listen(keys: ["a", "b"])),
        ("listen", ["keys": []], .listen(keys: [])),
        (
            "listen", ["since": ["epoch": "e", "revision": 4]],
            .listen(keys: nil, since: .init(epoch: "e", revision: 4))
        ),
        ("listen", ["keys": ["a"], "since": nil], .listen(keys: ["a"])),
        ("unlisten", ["subscription": "s1"], .unlisten(subscription: "s1")),
        ("logImpression", ["key": "a"], .logImpression(key: "a")),
        ("setUserId", ["userId": "u"], .setUserId("u")),
        ("setUserId", ["userId": ""], .setUserId("")),
        ("setAppState", ["state": "foreground"], .setAppState(.foreground)),
        ("setAppState", ["state": "background"], .setAppState(.background)),
        ("pushRegistered", [:], .pushRegistered),
        ("status", [:], .status),
        ("reload", [:], .reload),
        ("explain", ["key": "a"], .explain(key: "a")),
        ("metrics", ["format": "openmetrics"], .metrics(format: .openMetrics)),
        ("metrics", ["format": "prometheus"], .metrics(format: .prometheus)),
        ("setOverride", ["key": "a"], .setOverride(FlagOverride(key: "a"))),
        (
            "setOverride", ["key": "a", "enabled": false, "properties": ["n": 2]],
            .setOverride(FlagOverride(key: "a", isEnabled: false, properties: ["n": 2]))
        ),
        ("clearOverride", ["key": "a"], .clearOverride(key: "a")),
        ("clearOverride", ["all": true], .clearOverride(key: nil)),
        ("listOverrides", [:], .listOverrides),
    ]

    @Test func metricsWithoutAFormatIsOpenMetricsAndAnUnknownFormatIsInvalid() throws {
        #expect(try Call(method: "metrics", params: [:]) == .metrics(format: .openMetrics))
        #expect(throws: RPCError.self) { try Call(method: "metrics", params: ["format": "json"]) }
        #expect(throws: RPCError.self) { try Call(method: "metrics", params: ["format": 1]) }
        #expect(throws: RPCError.self) { try Call(method: "explain", params: [:]) }
    }

    @Test(arguments: valid)
    func everyMethodIsTyped(method: String, params: [String: JSONValue], expected: Call) throws {
        let call = try Call(method: method, params: params)
        #expect(call == expected)
        #expect(call.method == method)
    }

    @Test(arguments: valid)
    func paramsRoundTrip(method: String, params: [String: JSONValue], expected: Call) throws {
        #expect(try Call(method: expected.method, params: expected.params) == expected)
    }

    @Test(arguments: ["nope", "Get", "GET", "getall", "", " get"])
    func unknownMethodsAreMethodNotFound(method: String) {
        #expect(throws: RPCError.self) { try Call(method: method, params: ["key": "a"]) }
        do {
            _ = try Call(method: method, params: ["key": "a"])
        } catch {
            #expect(error.code == -32601)
        }
    }

    static let invalid: [(String, [String: JSONValue], String)] = [
        ("get", [:], "key"),
        ("get", ["key": 1], "key"),
        ("get", ["key": nil], "key"),
        ("get", ["Key": "a"], "key"),
        ("isEnabled", [:], "key"),
        ("isEnabled", ["key": true], "key"),
        ("isEnabled", ["key": "a", "default": "true"], "default"),
        ("isEnabled", ["key": "a", "default": 1], "default"),
        ("listen", ["keys": "a"], "keys"),
        ("listen", ["keys": ["a", 1]], "keys"),
        ("listen", ["keys": ["a": "b"]], "keys"),
        ("listen", ["since": "e"], "since"),
        ("listen", ["since": ["epoch": "e"]], "since"),
        ("listen", ["since": ["epoch": "e", "revision": 0.5]], "since"),
        ("unlisten", [:], "subscription"),
        ("unlisten", ["subscription": 1], "subscription"),
        ("logImpression", [:], "key"),
        ("logImpression", ["key": ["a"]], "key"),
        ("setUserId", [:], "userId"),
        ("setUserId", ["userId": 5], "userId"),
        ("setAppState", [:], "state"),
        ("setAppState", ["state": "asleep"], "state"),
        ("setAppState", ["state": true], "state"),
        ("setOverride", [:], "key"),
        ("setOverride", ["key": ""], "key"),
        ("setOverride", ["key": "a", "enabled": "on"], "enabled"),
        ("setOverride", ["key": "a", "properties": "x"], "properties"),
        ("clearOverride", [:], "key"),
        ("clearOverride", ["key": 1], "key"),
        ("clearOverride", ["all": false], "key"),
        ("clearOverride", ["all": 1], "all"),
        ("clearOverride", ["key": "a", "all": true], "all"),
    ]

    @Test(arguments: invalid)
    func missingOrMistypedParamsAreInvalidParamsNamingTheParam(
        method: String,
        params: [String: JSONValue],
        param: String
    ) {
        do {
            let call = try Call(method: method, params: params)
            Issue.record("accepted \(call)")
        } catch {
            #expect(error.code == -32602)
            #expect(error.data?["param"] == .string(param))
        }
    }

    @Test func onlyStateChangingMethodsAreControl() {
        #expect(Call.setUserId("u").isControl)
        #expect(Call.setAppState(.foreground).isControl)
        #expect(Call.pushRegistered.isControl)
        #expect(!Call.get(key: "a").isControl)
        #expect(!Call.reload.isControl)
        #expect(!Call.refresh.isControl)
    }
}

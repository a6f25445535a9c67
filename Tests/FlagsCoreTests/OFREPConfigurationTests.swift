import FlagsCore
import TestSupport
import Testing

/// The `[OFREP]` section: the listener's address, its token file and its limits.
@Suite(.hangLimit) struct OFREPConfigurationTests {
    private func parse(_ text: String) -> (Configuration, [String]) {
        var configuration = Configuration()
        let problems = ConfigurationParser.parse(text: text, file: "/etc/pwflagsd/pwflagsd.conf", into: &configuration)
        return (configuration, problems.map(\.description))
    }

    @Test func theListenerIsOffByDefault() {
        #expect(Configuration().ofrepListenAddress == nil)
    }

    @Test func everyKeyIsRead() {
        let (configuration, problems) = parse(
            "[OFREP]\nListenAddress=127.0.0.1:8016\nTokenFile=ofrep-token\nConnectionLimit=8\nIdleTimeout=2s\nRequestRate=0\n"
        )
        #expect(problems.isEmpty)
        #expect(configuration.ofrepListenAddress == .tcp(host: "127.0.0.1", port: 8016))
        #expect(configuration.ofrepTokenFile == "/etc/pwflagsd/ofrep-token")
        #expect(configuration.ofrepConnectionLimit == 8)
        #expect(configuration.ofrepIdleTimeout == .seconds(2))
        #expect(configuration.ofrepRequestRate == 0)
    }

    @Test(arguments: [
        ("/run/pwflagsd/ofrep.sock", OFREPListenAddress.unix(path: "/run/pwflagsd/ofrep.sock")),
        ("[::1]:80", .tcp(host: "::1", port: 80)), ("localhost:0", .tcp(host: "127.0.0.1", port: 0)),
        ("127.1.2.3:9", .tcp(host: "127.1.2.3", port: 9)),
    ])
    func addressesParse(text: String, expected: OFREPListenAddress) {
        #expect(OFREPListenAddress(parsing: text) == expected)
        #expect(OFREPListenAddress(parsing: expected.description) == expected)
    }

    @Test(arguments: [
        "0.0.0.0:80", "192.168.1.2:80", "[::]:80", "example.com:80", "127.0.0.1", "relative.sock", "127.0.0.1:70000",
    ])
    func addressesOffThisDeviceAreRefused(text: String) {
        #expect(OFREPListenAddress(parsing: text) == nil)
        #expect(parse("[OFREP]\nListenAddress=\(text)\nTokenFile=/t\n").1.count == 1)
    }

    @Test func tcpWithoutATokenFileIsAProblem() {
        let problems = parse("[OFREP]\nListenAddress=127.0.0.1:8016\n").1
        #expect(problems == ["/etc/pwflagsd/pwflagsd.conf:2: ListenAddress is a TCP address: set TokenFile too"])
        #expect(parse("[OFREP]\nListenAddress=/run/o.sock\n").1.isEmpty)
    }
}

@Suite(.hangLimit) struct AllowedOriginsTests {
    @Test(arguments: [
        "http://127.0.0.1:8080", "https://kiosk.local", "http://localhost", "http://[::1]:3000", "https://a-b.example",
    ])
    func exactOriginsAreRead(origin: String) {
        #expect(ConfigurationParser.isWebOrigin(origin))
    }

    @Test(arguments: [
        "*", "null", "http://*", "http://x/", "http://x/path", "ftp://x", "HTTP://x", "http://X", "http://x:0",
        "http://x:65536", "http://x:80a", "http://", "http://user@x", "http://x?y", "http://[::1", "http://x:",
        "127.0.0.1:8080",
    ])
    func anythingElseIsRefusedAsAnOrigin(origin: String) {
        #expect(!ConfigurationParser.isWebOrigin(origin))
    }

    @Test func theListIsReadAndAnEmptyValueEmptiesIt() {
        var configuration = Configuration()
        #expect(configuration.ofrepAllowedOrigins.isEmpty)
        var problems = ConfigurationParser.parse(
            text: "[OFREP]\nAllowedOrigins=http://127.0.0.1:8080 \t https://kiosk.local\n", file: "/x.conf",
            into: &configuration)
        #expect(problems.isEmpty)
        #expect(configuration.ofrepAllowedOrigins == ["http://127.0.0.1:8080", "https://kiosk.local"])
        problems = ConfigurationParser.parse(text: "[OFREP]\nAllowedOrigins=\n", file: "/x.conf", into: &configuration)
        #expect(problems.isEmpty)
        #expect(configuration.ofrepAllowedOrigins.isEmpty)
        problems = ConfigurationParser.parse(
            text: "[OFREP]\nAllowedOrigins=http://ok *\n", file: "/x.conf", into: &configuration)
        #expect(problems.map(\.description).joined().contains("invalid origin '*' for AllowedOrigins"))
    }
}

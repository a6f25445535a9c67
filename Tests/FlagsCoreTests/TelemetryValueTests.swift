import FlagsCore
import TestSupport
import Testing

@Suite(.hangLimit) struct TelemetryValueTests {
    @Test("SHA-256 gives FIPS 180-4's digests, across the padding's block boundary")
    func sha256Vectors() {
        #expect(SHA256.hex(Array("".utf8)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256.hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("A collector's address: https anywhere, plain http on this device only, no credentials or query")
    func collectorAddresses() {
        func base(_ text: String) -> String? { try? CollectorAddress.parse(text).get().base }
        #expect(base("https://otel.example.net:4318/") == "https://otel.example.net:4318")
        #expect(base("https://otel.example.net/otlp") == "https://otel.example.net/otlp")
        #expect(base("http://127.0.0.1:4318") == "http://127.0.0.1:4318")
        #expect(base("http://[::1]:4318") == "http://[::1]:4318")
        #expect(base("http://localhost:4318") == "http://localhost:4318")
        #expect(CollectorAddress.parse("http://otel.example.net:4318") == .failure(.plainHTTP))
        #expect(CollectorAddress.parse("http://127.0.0.1.example.net") == .failure(.plainHTTP))
        #expect(CollectorAddress.parse("https://user:key@otel.example.net") == .failure(.credentials))
        #expect(CollectorAddress.parse("https://otel.example.net/?key=1") == .failure(.query))
        #expect(CollectorAddress.parse("ftp://otel.example.net") == .failure(.notHTTP))
        #expect(
            (try? CollectorAddress.parse("https://c.example/").get())?.url(for: "v1/logs")
                == "https://c.example/v1/logs")
        // The collector an address names: its scheme and authority, whatever the path.
        #expect(CollectorAddress.origin(of: "HTTPS://Otel.example.net:4318/v1/logs") == "https://otel.example.net:4318")
        #expect(CollectorAddress.origin(of: "http://127.0.0.1:4318") == "http://127.0.0.1:4318")
    }

    @Test("--check-config refuses a collector's address that could leak or could not be used")
    func parserRefusesBadCollectors() {
        var parser = ConfigurationParser()
        parser.parse(text: "[Telemetry]\nOTLPEndpoint=http://otel.example.net:4318\nExportUserId=clear\n", file: "t")
        guard case .failure(let errors) = parser.finish() else {
            Issue.record("a plain-http collector elsewhere was accepted")
            return
        }
        let messages = errors.problems.map(\.description).joined(separator: "\n")
        #expect(messages.contains("plain http:// is only for a collector on this device"))
        #expect(messages.contains("expected no or hashed"))
    }
}

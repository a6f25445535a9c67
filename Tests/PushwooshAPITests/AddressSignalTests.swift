import Foundation
import PushwooshAPI
import TestSupport
import Testing

/// Talking to Pushwoosh (docs/behaviour.md): any reply in Pushwoosh's envelope may move the daemon, failed ones
/// included; JSON that is not the envelope sends it back to the default address; anything else says nothing.
@Suite(.hangLimit) struct AddressSignalTests {
    static func signal(_ text: String) -> PushwooshEnvelope.AddressSignal {
        PushwooshEnvelope.addressSignal(of: Array(text.utf8))
    }

    @Test(
        "An envelope names an https base_url whatever its status_code",
        arguments: [
            #"{"status_code":200,"status_message":"OK","base_url":"https://eu.example/json/1.3/"}"#,
            #"{"status_code":210,"status_message":"Wrong host","base_url":"https://eu.example/json/1.3/"}"#,
            #"{"status_code":"503","base_url":"https://eu.example/json/1.3/"}"#,
            #"{"status_code":null,"base_url":"https://eu.example/json/1.3/"}"#,
        ])
    func envelopeMoves(body: String) throws {
        let base = try #require(URL(string: "https://eu.example/json/1.3/"))
        #expect(Self.signal(body) == .move(base))
    }

    @Test(
        "An envelope without an acceptable https base_url says nothing",
        arguments: [
            #"{"status_code":500,"status_message":"Internal"}"#,
            #"{"status_code":200,"base_url":"http://eu.example/json/1.3/"}"#,
            #"{"status_code":200,"base_url":"https://eu.example/api/"}"#,
            #"{"status_code":200,"base_url":42}"#,
        ])
    func envelopeWithoutMove(body: String) {
        #expect(Self.signal(body) == PushwooshEnvelope.AddressSignal.none)
    }

    @Test(
        "JSON without status_code is not Pushwoosh's envelope",
        arguments: [#"{"message":"Bad gateway"}"#, #"{"base_url":"https://eu.example/json/1.3/"}"#, "[]", "null", "7"])
    func nonEnvelopeJSONResets(body: String) {
        #expect(Self.signal(body) == .reset)
    }

    @Test(
        "A body that is not JSON, or none, says nothing",
        arguments: ["", "<html>502 Bad Gateway</html>", #"{"status_code":200,"base_url":"https://eu.ex"#])
    func notJSONSaysNothing(body: String) {
        #expect(Self.signal(body) == PushwooshEnvelope.AddressSignal.none)
    }
}

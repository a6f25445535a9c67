import FlagsCore
import TestSupport
import Testing

/// The one escaping rule the daemon's log and the CLI's terminal output share.
@Suite(.hangLimit) struct ControlEscapingTests {
    @Test(arguments: [
        ("plain text, é and 🚩", "plain text, é and 🚩"),
        ("a\nb", #"a\nb"#),
        ("a\rb", #"a\rb"#),
        ("tab\there", #"tab\there"#),
        ("nul\u{0}", #"nul\x00"#),
        ("bell\u{07}", #"bell\x07"#),
        ("\u{1B}[2J", #"\x1B[2J"#),
        ("del\u{7F}", #"del\x7F"#),
        ("csi\u{9B}31m", #"csi\u009B31m"#),
        ("c1 \u{80} \u{9F}", #"c1 \u0080 \u009F"#),
        ("line\u{2028}para\u{2029}", #"line\u2028para\u2029"#),
        (#"back\slash"#, #"back\slash"#),
        ("\u{A0}no-break and \u{200B}zero width", "\u{A0}no-break and \u{200B}zero width"),
    ])
    func escapes(_ text: String, _ shown: String) {
        #expect(ControlEscaping.escaped(text) == shown)
    }

    @Test func whatIsEscapedIsExactlyC0DelC1AndTheSeparators() {
        let escaped = (0...0x2100).compactMap(Unicode.Scalar.init).filter(ControlEscaping.isEscaped)
        let expected = (0...0x1F).map { $0 } + (0x7F...0x9F).map { $0 } + [0x2028, 0x2029]
        #expect(escaped.map(\.value) == expected.map { UInt32($0) })
        #expect(ControlEscaping.isEscaped("\u{2029}") && !ControlEscaping.isEscaped("\u{202A}"))
    }

    @Test func anEscapedTextHasNoControlLeftAndStaysOneLine() {
        let hostile = (0...0xA0).compactMap(Unicode.Scalar.init).map(String.init).joined() + "\u{2028}\u{2029}"
        let shown = ControlEscaping.escaped(hostile)
        #expect(!shown.unicodeScalars.contains(where: ControlEscaping.isEscaped))
        #expect(!shown.contains("\n"))
    }
}

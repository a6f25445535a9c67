/// The one rule for showing text that came from a flag source (keys, rule ids, property names and values, and
/// messages that quote them) to a person: the daemon's stderr log and the CLI's output on a terminal both write
/// text through `ControlEscaping.escaped(_:)`.
///
/// Escaped, each scalar as one escape, so that a line stays a line and a terminal is sent no control sequence:
/// - C0 controls (U+0000-U+001F) and DEL (U+007F): `\n`, `\r` and `\t` by name, the others as `\xHH`
///   (`\x00`, `\x1B`, `\x7F`);
/// - C1 controls (U+0080-U+009F), which some terminals take as escape sequences (U+009B is CSI), and the line and
///   paragraph separators U+2028 and U+2029, which some viewers break lines at: `\uHHHH` (`\u009B`, `\u2028`).
///
/// Every other scalar, a backslash included, is kept as it is: the escapes are for a reader, not a parser.
/// Hex digits are uppercase.
public enum ControlEscaping {
    /// Whether `scalar` is written as an escape.
    public static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    /// `text` with every scalar `isEscaped` accepts written as its escape; `text` itself when it has none.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isEscaped) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            guard isEscaped(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                let digits = String(scalar.value, radix: 16, uppercase: true)
                let width = scalar.value < 0x80 ? 2 : 4
                result += (scalar.value < 0x80 ? "\\x" : "\\u") + String(repeating: "0", count: width - digits.count)
                result += digits
            }
        }
        return result
    }
}

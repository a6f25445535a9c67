/// Makes fuzz inputs for the protocol: mutations of corpus seeds, and requests generated from the grammar.
///
/// Blind (no coverage feedback), but biased towards what the protocol code branches on: JSON punctuation,
/// member names, method names, ids at the edges of the fast scanner, escapes, invalid UTF-8 and deep nesting.
public struct FuzzMutator {
    /// The largest input made; the line limits the checks use are far below it.
    public let maximumLength: Int
    private var random: SeededGenerator
    private let corpus: [[UInt8]]

    public init(seed: UInt64, corpus: [[UInt8]], maximumLength: Int = 4096) {
        self.random = SeededGenerator(seed: seed)
        self.corpus = corpus.isEmpty ? [Array("{}".utf8)] : corpus
        self.maximumLength = maximumLength
    }

    /// Fragments worth splicing in whole.
    static let tokens: [[UInt8]] = [
        "{", "}", "[", "]", "\"", ":", ",", " ", "\t", "\r", "\n", "\r\n", "\\", "\\\"", "\\\\", "\\u0000",
        "\\u00e9", "\\ud83d\\ude00", "\\ud800", "\\udc00", "\\u12", "\\x", "0", "-", "-0", "01", "1.5", "1e3",
        "1e999", "-1e-999", "123456789012345", "1234567890123456", "9007199254740993", "true", "false", "null",
        "tru", "\"id\"", "\"method\"", "\"params\"", "\"jsonrpc\"", "\"2.0\"", "\"1.0\"", "\"key\"", "\"keys\"",
        "\"default\"", "\"get\"", "\"getAll\"", "\"isEnabled\"", "\"listen\"", "\"unlisten\"", "\"status\"",
        "\"refresh\"", "\"setUserId\"", "\"setAppState\"", "\"pushRegistered\"", "\"reload\"", "\"logImpression\"",
        "\"subscription\"", "\"userId\"", "\"state\"", "\"foreground\"", "{\"key\":\"k\"}", "[[[[[[[[",
        "]]]]]]]]", "é", "😀", "\u{7F}",
    ].map { Array($0.utf8) }

    /// Raw bytes worth trying: controls, invalid UTF-8 lead and continuation bytes, overlong forms.
    static let bytes: [UInt8] = [
        0x00, 0x01, 0x08, 0x1F, 0x20, 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xC3, 0xE0, 0xED, 0xF4, 0xF5, 0xFF,
    ]

    /// The next input.
    public mutating func next() -> [UInt8] {
        var input: [UInt8]
        if random.oneIn(4) {
            input = generatedRequest()
        } else {
            input = corpus[random.below(corpus.count)]
        }
        for _ in 0...random.below(6) { mutate(&input) }
        if input.count > maximumLength { input.removeSubrange(maximumLength...) }
        return input
    }

    private mutating func mutate(_ input: inout [UInt8]) {
        switch random.below(11) {
        case 0 where !input.isEmpty:
            let index = random.below(input.count)
            input[index] ^= UInt8(1) << UInt8(random.below(8))
        case 1 where !input.isEmpty:
            input[random.below(input.count)] = Self.bytes[random.below(Self.bytes.count)]
        case 2:
            input.insert(contentsOf: Self.tokens[random.below(Self.tokens.count)], at: random.below(input.count + 1))
        case 3 where !input.isEmpty:
            let start = random.below(input.count)
            let end = min(input.count, start + 1 + random.below(16))
            input.removeSubrange(start..<end)
        case 4 where !input.isEmpty:
            let start = random.below(input.count)
            let end = min(input.count, start + 1 + random.below(32))
            input.insert(contentsOf: input[start..<end], at: random.below(input.count + 1))
        case 5:
            let other = corpus[random.below(corpus.count)]
            let cut = random.below(input.count + 1)
            let from = random.below(other.count + 1)
            input = Array(input[..<cut]) + Array(other[from...])
        case 6 where !input.isEmpty:
            input.removeSubrange(random.below(input.count)...)
        case 7:
            let depth = 1 + random.below(300)
            let open: UInt8 = random.oneIn(2) ? UInt8(ascii: "[") : UInt8(ascii: "{")
            input = [UInt8](repeating: open, count: depth) + input
        case 8:
            // Several lines in one input, so that the framer sees lines and blanks together.
            input += (random.oneIn(2) ? [10] : [13, 10]) + generatedRequest()
        case 9 where !input.isEmpty:
            let index = random.below(input.count)
            let run = [UInt8](repeating: input[index], count: 1 + random.below(64))
            input.insert(contentsOf: run, at: index)
        default:
            input.insert(Self.bytes[random.below(Self.bytes.count)], at: random.below(input.count + 1))
        }
    }

    /// A request object built from the protocol's members, most of them well formed, in random order and spacing.
    public mutating func generatedRequest() -> [UInt8] {
        var members: [[UInt8]] = []
        if !random.oneIn(8) { members.append(member("id", pick(Self.ids))) }
        if !random.oneIn(10) { members.append(member("method", pick(Self.methods))) }
        if random.oneIn(3) { members.append(member("jsonrpc", random.oneIn(6) ? "\"1.0\"" : "\"2.0\"")) }
        if !random.oneIn(4) {
            var params: [[UInt8]] = []
            if !random.oneIn(5) { params.append(member(pick(Self.paramNames), pick(Self.keys))) }
            if random.oneIn(2) { params.append(member("default", pick(Self.defaults))) }
            if random.oneIn(6) { params.append(member("keys", "[" + pick(Self.keys) + "]")) }
            members.append(member("params", random.oneIn(10) ? pick(Self.defaults) : objectText(params)))
        }
        if random.oneIn(12) { members.append(member("extra", pick(Self.defaults))) }
        if random.oneIn(10), let first = members.first { members.append(first) }
        return object(members)
    }

    static let ids = [
        "1", "0", "-42", "123456789012345", "1234567890123456", "01", "-0", "1.5", "1e3", "null", "true",
        "\"a-b c\"", "\"\"", "\"\\u0041\"", "\"é\"", "[1]", "{}", "-", "\"tab\there\"",
    ]
    static let methods = [
        "\"get\"", "\"isEnabled\"", "\"getAll\"", "\"status\"", "\"listen\"", "\"unlisten\"", "\"refresh\"",
        "\"GET\"", "\"get \"", "\"g\\u0065t\"", "5", "null", "\"\"",
    ]
    static let paramNames = ["key", "key", "key", "subscription", "userId", "state", "Key"]
    static let keys = [
        "\"new_checkout\"", "\"k\"", "\"\"", "\"é😀\"", "\"new\\u005fcheckout\"", "\"a\\\"b\"", "5", "null",
        "\"foreground\"", "\"\\ud800\"", "[\"k\"]",
    ]
    static let defaults = ["true", "false", "null", "1", "\"yes\"", "{}", "[]"]

    private mutating func pick(_ choices: [String]) -> String {
        choices[random.below(choices.count)]
    }

    private mutating func space() -> String {
        switch random.below(8) {
        case 0: " "
        case 1: "\t"
        case 2: " \r\n "
        default: ""
        }
    }

    private mutating func member(_ name: String, _ value: String) -> [UInt8] {
        Array("\(space())\"\(name)\"\(space()):\(space())\(value)\(space())".utf8)
    }

    private mutating func object(_ members: [[UInt8]]) -> [UInt8] {
        var shuffled = members
        shuffled.shuffle(using: &random)
        var output = Array("\(space()){".utf8)
        for (index, member) in shuffled.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output += member
        }
        output += Array("}\(space())".utf8)
        return output
    }

    private mutating func objectText(_ members: [[UInt8]]) -> String {
        String(decoding: object(members), as: UTF8.self)
    }
}

extension JSONValue {
    /// Where the value of the top-level member `name` lies in the JSON text `bytes` (without the whitespace
    /// around it); nil when the text is not an object or has no such member. With a repeated name, the last
    /// one, as the parser keeps.
    ///
    /// For what must be echoed as it came (a request's id): a number read into a `Double` and printed back is
    /// not always the same text.
    public static func rawMemberRange(named name: String, in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        guard !parser.isAtEnd, bytes[parser.index] == UInt8(ascii: "{") else { return nil }
        parser.index += 1
        var found: Range<Int>?
        while true {
            parser.skipWhitespace()
            guard !parser.isAtEnd, bytes[parser.index] == UInt8(ascii: "\"") else { return found }
            guard let member = try? parser.parseString() else { return found }
            parser.skipWhitespace()
            guard !parser.isAtEnd, bytes[parser.index] == UInt8(ascii: ":") else { return found }
            parser.index += 1
            parser.skipWhitespace()
            let start = parser.index
            guard (try? parser.parseValue(depth: 1)) != nil else { return found }
            if member == name { found = start..<parser.index }
            parser.skipWhitespace()
            guard !parser.isAtEnd, bytes[parser.index] == UInt8(ascii: ",") else { return found }
            parser.index += 1
        }
    }
}

public import FlagsCore

/// A request's id as it came on the wire: its JSON text, echoed byte for byte.
///
/// An id read into a `JSONValue` and printed back is not always what the client sent: 9007199254740993 comes
/// back as 9007199254740992, `1.50` as `1.5`, `"\u00e9"` as `"é"`. Keeping the text answers every client with
/// its own id, whatever its JSON library does with numbers.
public struct RequestID: Sendable, Equatable {
    /// The id's JSON text, without the whitespace around it.
    public let text: ArraySlice<UInt8>

    /// An id whose text is already known to be one JSON string or number.
    public init(text: ArraySlice<UInt8>) {
        self.text = text
    }

    /// The id of a value built in code (the client side, tests): its compact JSON text.
    public init(_ value: JSONValue) {
        var output: [UInt8] = []
        value.write(to: &output)
        self.text = output[...]
    }

    /// The id of a request that could not be read.
    public static let unreadable = RequestID(.null)

    /// The id to answer the request in `line` with, given the id `Request.decode` read from it: nil for a
    /// notification (no id), the id's text as sent otherwise.
    public init?(echoing parsed: JSONValue?, in line: ArraySlice<UInt8>) {
        guard let parsed else { return nil }
        guard !parsed.isNull else {
            self = .unreadable
            return
        }
        let range = line.withUnsafeBufferPointer { JSONValue.rawMemberRange(named: "id", in: $0) }
        guard let range else {
            self.init(parsed)
            return
        }
        self.init(text: ArraySlice(line[(line.startIndex + range.lowerBound)..<(line.startIndex + range.upperBound)]))
    }

    /// A copy that owns its bytes, for an id that outlives the buffer its line came in.
    public var detached: RequestID {
        RequestID(text: ArraySlice(Array(text)))
    }

    /// Appends the id's text.
    public func write(to output: inout [UInt8]) {
        output.append(contentsOf: text)
    }
}

public import FlagsCore

/// The lines the daemon writes: responses and notifications, compact and newline-terminated.
public enum Message {
    /// Appends `{"jsonrpc":"2.0","id":ID,"result":RESULT}\n`.
    public static func writeResult(id: JSONValue, result: JSONValue, to output: inout [UInt8]) {
        writeResult(id: RequestID(id), result: result, to: &output)
    }

    /// Appends `{"jsonrpc":"2.0","id":ID,"result":RESULT}\n` with the id as the request sent it.
    public static func writeResult(id: RequestID, result: JSONValue, to output: inout [UInt8]) {
        writeResult(id: id, to: &output) { result.write(to: &$0) }
    }

    /// Appends a result line whose result object `writeBody` writes itself.
    public static func writeResult(id: JSONValue, to output: inout [UInt8], writeBody: (inout [UInt8]) -> Void) {
        writeResult(id: RequestID(id), to: &output, writeBody: writeBody)
    }

    /// Appends a result line whose result object `writeBody` writes itself (the fast path for flags).
    public static func writeResult(id: RequestID, to output: inout [UInt8], writeBody: (inout [UInt8]) -> Void) {
        writeResultPrefix(id: id, to: &output)
        writeBody(&output)
        output.append(contentsOf: resultSuffix)
    }

    /// `{"jsonrpc":"2.0","id":ID,"result":`: a result line up to its result object, for callers that send the
    /// object from a shared buffer.
    public static func writeResultPrefix(id: RequestID, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        id.write(to: &output)
        output.append(contentsOf: #","result":"#.utf8)
    }

    /// What ends a result line after its result object.
    public static let resultSuffix: [UInt8] = Array("}\n".utf8)

    /// Appends `{"jsonrpc":"2.0","id":ID,"error":{…}}\n`.
    public static func writeError(id: JSONValue, error: RPCError, to output: inout [UInt8]) {
        writeError(id: RequestID(id), error: error, to: &output)
    }

    /// Appends `{"jsonrpc":"2.0","id":ID,"error":{…}}\n` with the id as the request sent it.
    public static func writeError(id: RequestID, error: RPCError, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        id.write(to: &output)
        output.append(contentsOf: #","error":"#.utf8)
        error.jsonValue.write(to: &output)
        output.append(contentsOf: "}\n".utf8)
    }
}

/// A line the daemon sent, as a client reads it.
public enum IncomingMessage: Sendable, Equatable {
    case response(id: JSONValue, result: Result<JSONValue, RPCError>)
    case notification(method: String, params: JSONValue)

    /// Reads one line; nil when it is neither a response nor a notification.
    public init?(line: some Collection<UInt8>) {
        guard let value = try? JSONValue(parsing: Array(line)), value.objectValue != nil else { return nil }
        if let method = value["method"]?.stringValue {
            self = .notification(method: method, params: value["params"] ?? .object([:]))
            return
        }
        guard let id = value["id"] else { return nil }
        if let errorValue = value["error"] {
            guard let error = RPCError(json: errorValue) else { return nil }
            self = .response(id: id, result: .failure(error))
        } else if let result = value["result"] {
            self = .response(id: id, result: .success(result))
        } else {
            return nil
        }
    }
}

/// The `flagsChanged` notification of the README's Protocol section.
public struct FlagsChanged: Sendable, Equatable {
    public static let method = "flagsChanged"

    public var subscription: String
    public var revision: Int
    public var changed: [Flag]
    public var removed: [String]
    /// When the flags reach their age, as `status.expiresAt`: an ISO 8601 string, or null when they never
    /// expire; nil when the daemon did not say (one older than this member).
    public var expiresAt: JSONValue?

    public init(
        subscription: String, revision: Int, changed: [Flag], removed: [String], expiresAt: JSONValue? = nil
    ) {
        self.subscription = subscription
        self.revision = revision
        self.changed = changed
        self.removed = removed
        self.expiresAt = expiresAt
    }

    /// Appends the notification line.
    public func write(to output: inout [UInt8]) {
        Self.writePrefix(subscription: subscription, to: &output)
        output.append(
            contentsOf: Self.tail(
                revision: revision, changed: changed.map(\.wireBytes), removed: removed, expiresAt: expiresAt))
    }

    /// The part of the line that names the subscription; everything after it is the same for every
    /// subscriber of the same keys, so the daemon encodes that `tail` once per change.
    public static func writePrefix(subscription: String, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","method":"flagsChanged","params":{"subscription":"#.utf8)
        JSONValue.writeString(subscription, to: &output)
    }

    /// The rest of the line after `writePrefix`, from flag objects already encoded.
    public static func tail(
        revision: Int, changed: some Sequence<[UInt8]>, removed: [String], expiresAt: JSONValue? = nil
    ) -> [UInt8] {
        var output: [UInt8] = []
        output.append(contentsOf: #","revision":"#.utf8)
        JSONValue.writeNumber(Double(revision), to: &output)
        if let expiresAt {
            output.append(contentsOf: #","expiresAt":"#.utf8)
            expiresAt.write(to: &output)
        }
        output.append(contentsOf: #","changed":["#.utf8)
        var first = true
        for flag in changed {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            output.append(contentsOf: flag)
        }
        output.append(contentsOf: #"],"removed":"#.utf8)
        JSONValue.array(removed.map(JSONValue.string)).write(to: &output)
        output.append(contentsOf: "}}\n".utf8)
        return output
    }

    /// Reads the params of a `flagsChanged` notification.
    public init?(params: JSONValue) {
        guard let subscription = params["subscription"]?.stringValue, let revision = params["revision"]?.integerValue,
            let changed = params["changed"]?.arrayValue, let removed = params["removed"]?.arrayValue
        else { return nil }
        let flags = changed.compactMap(Flag.init(wire:))
        let keys = removed.compactMap(\.stringValue)
        guard flags.count == changed.count, keys.count == removed.count else { return nil }
        self.init(
            subscription: subscription, revision: revision, changed: flags, removed: keys,
            expiresAt: params["expiresAt"])
    }
}

/// The flag list of `getAll`, `refresh` and `listen`: a revision and the flags sorted by key.
public struct FlagListing: Sendable, Equatable {
    public var revision: Int
    public var flags: [Flag]
    /// `listen` only.
    public var subscription: String?
    /// `refresh` only.
    public var fromNetwork: Bool?
    /// `listen` only: as `FlagsChanged.expiresAt`.
    public var expiresAt: JSONValue?

    public init(
        revision: Int, flags: [Flag], subscription: String? = nil, fromNetwork: Bool? = nil,
        expiresAt: JSONValue? = nil
    ) {
        self.revision = revision
        self.flags = flags
        self.subscription = subscription
        self.fromNetwork = fromNetwork
        self.expiresAt = expiresAt
    }

    /// Appends the members only a `listen` result has, each followed by a comma:
    /// `"subscription":"s1","expiresAt":…,`.
    public static func writeListenMembers(_ subscription: String, expiresAt: JSONValue, to output: inout [UInt8]) {
        output.append(contentsOf: #""subscription":"#.utf8)
        JSONValue.writeString(subscription, to: &output)
        output.append(contentsOf: #","expiresAt":"#.utf8)
        expiresAt.write(to: &output)
        output.append(UInt8(ascii: ","))
    }

    /// Reads a result object.
    public init?(result: JSONValue) {
        guard let revision = result["revision"]?.integerValue, let list = result["flags"]?.arrayValue else {
            return nil
        }
        let flags = list.compactMap(Flag.init(wire:))
        guard flags.count == list.count else { return nil }
        self.init(
            revision: revision,
            flags: flags,
            subscription: result["subscription"]?.stringValue,
            fromNetwork: result["fromNetwork"]?.boolValue,
            expiresAt: result["expiresAt"]
        )
    }
}

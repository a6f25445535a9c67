public import FlagsCore

/// The flag list of `getAll`, `refresh` and `listen`: a revision and the flags sorted by key.
public struct FlagListing: CallResult, Equatable {
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

    /// Appends the result object: `{"subscription":…,"expiresAt":…,"revision":N,"flags":[…],"fromNetwork":…}`,
    /// each optional member only when set.
    public func write(to output: inout [UInt8]) {
        Self.writeHead(
            revision: revision, listen: subscription.map { ($0, expiresAt ?? .null) }, to: &output)
        output.append(UInt8(ascii: "["))
        for (position, flag) in flags.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            flag.writeWire(to: &output)
        }
        output.append(UInt8(ascii: "]"))
        Self.writeTail(fromNetwork: fromNetwork, to: &output)
    }

    /// Appends the object up to its `flags` array: `{"subscription":…,"expiresAt":…,"revision":N,"flags":`,
    /// for a writer that appends flag objects already encoded (`Flag.wireBytes`), then `writeTail`.
    public static func writeHead(
        revision: Int, listen: (subscription: String, expiresAt: JSONValue)?, to output: inout [UInt8]
    ) {
        output.append(UInt8(ascii: "{"))
        if let listen {
            output.append(contentsOf: #""subscription":"#.utf8)
            JSONValue.writeString(listen.subscription, to: &output)
            output.append(contentsOf: #","expiresAt":"#.utf8)
            listen.expiresAt.write(to: &output)
            output.append(UInt8(ascii: ","))
        }
        output.append(contentsOf: #""revision":"#.utf8)
        JSONValue.writeNumber(Double(revision), to: &output)
        output.append(contentsOf: #","flags":"#.utf8)
    }

    /// Appends what follows the `flags` array: `fromNetwork` for `refresh`, and the closing brace.
    public static func writeTail(fromNetwork: Bool?, to output: inout [UInt8]) {
        if let fromNetwork {
            output.append(contentsOf: (fromNetwork ? #","fromNetwork":true"# : #","fromNetwork":false"#).utf8)
        }
        output.append(UInt8(ascii: "}"))
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

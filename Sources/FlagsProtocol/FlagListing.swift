public import FlagsCore

/// The flag list of `getAll`, `refresh` and `listen`: the daemon's epoch, a revision and the flags sorted by key;
/// or, for a `listen` whose `since` is where the daemon still stands, `unchanged` and no flags.
public struct FlagListing: CallResult, Equatable {
    /// New at every daemon start; nil from a daemon older than this member.
    public var epoch: String?
    public var revision: Int
    /// Empty when `unchanged`.
    public var flags: [Flag]
    /// `listen` only.
    public var subscription: String?
    /// `refresh` only.
    public var fromNetwork: Bool?
    /// `listen` only: as `FlagsChanged.expiresAt`.
    public var expiresAt: JSONValue?
    /// `listen` only: the `since` it was given is the daemon's epoch and revision, so the flags the client holds
    /// are the flags; the reply lists none.
    public var unchanged: Bool

    public init(
        epoch: String? = nil, revision: Int, flags: [Flag], subscription: String? = nil, fromNetwork: Bool? = nil,
        expiresAt: JSONValue? = nil, unchanged: Bool = false
    ) {
        self.epoch = epoch
        self.revision = revision
        self.flags = flags
        self.subscription = subscription
        self.fromNetwork = fromNetwork
        self.expiresAt = expiresAt
        self.unchanged = unchanged
    }

    /// Where this listing stands in the daemon's change stream; nil from a daemon that sends no epoch.
    public var position: StreamPosition? {
        epoch.map { StreamPosition(epoch: $0, revision: revision) }
    }

    /// Appends the result object:
    /// `{"subscription":…,"expiresAt":…,"epoch":…,"revision":N,"flags":[…],"fromNetwork":…}`, each optional
    /// member only when set; `"unchanged":true` in place of `flags` when unchanged.
    public func write(to output: inout [UInt8]) {
        let listen = subscription.map { ($0, expiresAt ?? .null) }
        if unchanged {
            Self.writeUnchanged(epoch: epoch, revision: revision, listen: listen, to: &output)
            return
        }
        Self.writeHead(epoch: epoch, revision: revision, listen: listen, to: &output)
        output.append(UInt8(ascii: "["))
        for (position, flag) in flags.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            flag.writeWire(to: &output)
        }
        output.append(UInt8(ascii: "]"))
        Self.writeTail(fromNetwork: fromNetwork, to: &output)
    }

    /// Appends the object up to its `flags` array:
    /// `{"subscription":…,"expiresAt":…,"epoch":…,"revision":N,"flags":`, for a writer that appends flag objects
    /// already encoded (`Flag.wireBytes`), then `writeTail`.
    public static func writeHead(
        epoch: String?, revision: Int, listen: (subscription: String, expiresAt: JSONValue)?,
        to output: inout [UInt8]
    ) {
        writeMembers(epoch: epoch, revision: revision, listen: listen, to: &output)
        output.append(contentsOf: #","flags":"#.utf8)
    }

    /// Appends the whole object of a `listen` that found nothing changed since the client's position:
    /// `{"subscription":…,"expiresAt":…,"epoch":…,"revision":N,"unchanged":true}`.
    public static func writeUnchanged(
        epoch: String?, revision: Int, listen: (subscription: String, expiresAt: JSONValue)?,
        to output: inout [UInt8]
    ) {
        writeMembers(epoch: epoch, revision: revision, listen: listen, to: &output)
        output.append(contentsOf: #","unchanged":true}"#.utf8)
    }

    /// Appends what follows the `flags` array: `fromNetwork` for `refresh`, and the closing brace.
    public static func writeTail(fromNetwork: Bool?, to output: inout [UInt8]) {
        if let fromNetwork {
            output.append(contentsOf: (fromNetwork ? #","fromNetwork":true"# : #","fromNetwork":false"#).utf8)
        }
        output.append(UInt8(ascii: "}"))
    }

    private static func writeMembers(
        epoch: String?, revision: Int, listen: (subscription: String, expiresAt: JSONValue)?,
        to output: inout [UInt8]
    ) {
        output.append(UInt8(ascii: "{"))
        if let listen {
            output.append(contentsOf: #""subscription":"#.utf8)
            JSONValue.writeString(listen.subscription, to: &output)
            output.append(contentsOf: #","expiresAt":"#.utf8)
            listen.expiresAt.write(to: &output)
            output.append(UInt8(ascii: ","))
        }
        if let epoch {
            output.append(contentsOf: #""epoch":"#.utf8)
            JSONValue.writeString(epoch, to: &output)
            output.append(UInt8(ascii: ","))
        }
        output.append(contentsOf: #""revision":"#.utf8)
        JSONValue.writeNumber(Double(revision), to: &output)
    }

    /// Reads a result object.
    public init?(result: JSONValue) {
        guard let revision = result["revision"]?.integerValue else { return nil }
        let unchanged = result["unchanged"]?.boolValue ?? false
        var flags: [Flag] = []
        if !unchanged {
            guard let list = result["flags"]?.arrayValue else { return nil }
            flags = list.compactMap(Flag.init(wire:))
            guard flags.count == list.count else { return nil }
        }
        self.init(
            epoch: result["epoch"]?.stringValue,
            revision: revision,
            flags: flags,
            subscription: result["subscription"]?.stringValue,
            fromNetwork: result["fromNetwork"]?.boolValue,
            expiresAt: result["expiresAt"],
            unchanged: unchanged
        )
    }
}

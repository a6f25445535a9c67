public import FlagsCore

/// The `flagsChanged` notification of docs/protocol.md.
public struct FlagsChanged: Sendable, Equatable {
    public static let method = "flagsChanged"

    public var subscription: String
    /// New at every daemon start (as `FlagListing.epoch`); nil from a daemon older than this member.
    public var epoch: String?
    public var revision: Int
    public var changed: [Flag]
    public var removed: [String]
    /// When the flags reach their age, as `status.expiresAt`: an ISO 8601 string, or null when they never
    /// expire; nil when the daemon did not say (one older than this member).
    public var expiresAt: JSONValue?

    public init(
        subscription: String, epoch: String? = nil, revision: Int, changed: [Flag], removed: [String],
        expiresAt: JSONValue? = nil
    ) {
        self.subscription = subscription
        self.epoch = epoch
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
                epoch: epoch, revision: revision, changed: changed.map(\.wireBytes), removed: removed,
                expiresAt: expiresAt))
    }

    /// The part of the line that names the subscription; everything after it is the same for every
    /// subscriber of the same keys, so the daemon encodes that `tail` once per change.
    public static func writePrefix(subscription: String, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","method":"flagsChanged","params":{"subscription":"#.utf8)
        JSONValue.writeString(subscription, to: &output)
    }

    /// The rest of the line after `writePrefix`, from flag objects already encoded.
    public static func tail(
        epoch: String?, revision: Int, changed: some Sequence<[UInt8]>, removed: [String],
        expiresAt: JSONValue? = nil
    ) -> [UInt8] {
        var output: [UInt8] = []
        if let epoch {
            output.append(contentsOf: #","epoch":"#.utf8)
            JSONValue.writeString(epoch, to: &output)
        }
        writeMembers(revision: revision, expiresAt: expiresAt, changed: changed, removed: removed, to: &output)
        output.append(contentsOf: "}}\n".utf8)
        return output
    }

    /// The members every change carries after its epoch, on the line socket and in a Varlink `Listen` reply:
    /// `,"revision":…`, `,"expiresAt":…` (when known), the changed flags from their encoded bytes, and the
    /// removed keys.
    static func writeMembers(
        revision: Int, expiresAt: JSONValue?, changed: some Sequence<[UInt8]>, removed: [String],
        to output: inout [UInt8]
    ) {
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
            subscription: subscription, epoch: params["epoch"]?.stringValue, revision: revision, changed: flags,
            removed: keys,
            expiresAt: params["expiresAt"])
    }
}

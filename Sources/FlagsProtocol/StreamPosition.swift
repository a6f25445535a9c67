public import FlagsCore

/// Where a client stands in the daemon's change stream: the daemon's `epoch` (new at every start) and the
/// `revision` it last saw within it. `listen` takes one as `since` to answer "unchanged" instead of the listing.
public struct StreamPosition: Sendable, Hashable {
    public var epoch: String
    public var revision: Int

    public init(epoch: String, revision: Int) {
        self.epoch = epoch
        self.revision = revision
    }

    /// The `since` object on the wire.
    public var jsonValue: JSONValue {
        ["epoch": .string(epoch), "revision": .number(Double(revision))]
    }

    /// Reads a `since` object; nil unless it holds a string `epoch` and an integer `revision`.
    public init?(_ value: JSONValue) {
        guard let epoch = value["epoch"]?.stringValue, let revision = value["revision"]?.integerValue else {
            return nil
        }
        self.init(epoch: epoch, revision: revision)
    }
}

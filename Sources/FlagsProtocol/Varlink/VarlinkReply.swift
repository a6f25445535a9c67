public import FlagsCore

/// Writes Varlink replies: `{"parameters":{…}}`, `{"continues":true,"parameters":{…}}` or
/// `{"error":"…","parameters":{…}}`, each ended by its NUL.
public enum VarlinkReply {
    /// The end of every message.
    public static let terminator: UInt8 = 0

    /// What comes before the parameters object.
    public static func writePrefix(continues: Bool, to output: inout [UInt8]) {
        output.append(contentsOf: (continues ? #"{"continues":true,"parameters":"# : #"{"parameters":"#).utf8)
    }

    /// What follows the parameters object: the closing brace and the NUL.
    public static func writeSuffix(to output: inout [UInt8]) {
        output.append(UInt8(ascii: "}"))
        output.append(terminator)
    }

    /// A reply whose parameters are a method's result object.
    public static func write(_ result: any CallResult, continues: Bool = false, to output: inout [UInt8]) {
        writePrefix(continues: continues, to: &output)
        result.write(to: &output)
        writeSuffix(to: &output)
    }

    /// A reply whose parameters are `parameters`.
    public static func write(parameters: JSONValue, continues: Bool = false, to output: inout [UInt8]) {
        writePrefix(continues: continues, to: &output)
        parameters.write(to: &output)
        writeSuffix(to: &output)
    }

    /// An error reply.
    public static func write(_ error: VarlinkError, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"error":"#.utf8)
        JSONValue.writeString(error.name, to: &output)
        output.append(contentsOf: #","parameters":"#.utf8)
        JSONValue.object(error.parameters).write(to: &output)
        writeSuffix(to: &output)
    }

    /// A change for a `Listen` call: `{"continues":true,"parameters":{"epoch":…,"revision":N,"expiresAt":…,
    /// "changed":[…],"removed":[…]}}`, from flag objects already encoded.
    public static func writeChange(
        epoch: String, revision: Int, expiresAt: JSONValue, changed: some Sequence<[UInt8]>, removed: [String],
        to output: inout [UInt8]
    ) {
        writePrefix(continues: true, to: &output)
        output.append(contentsOf: #"{"epoch":"#.utf8)
        JSONValue.writeString(epoch, to: &output)
        // expiresAt is always there in Varlink: null when the flags never expire.
        FlagsChanged.writeMembers(
            revision: revision, expiresAt: .some(expiresAt), changed: changed, removed: removed, to: &output)
        output.append(UInt8(ascii: "}"))
        writeSuffix(to: &output)
    }
}

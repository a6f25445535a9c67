import FlagsCore

/// `getAll` once the last change settled.
struct FinalFlags {
    var revision: Int
    var flags: [JSONValue]
    var byKey: [String: JSONValue]

    init(revision: Int, flags: [JSONValue]) {
        self.revision = revision
        self.flags = flags
        var byKey: [String: JSONValue] = [:]
        for flag in flags {
            if let key = flag["key"]?.stringValue { byKey[key] = flag }
        }
        self.byKey = byKey
    }
}

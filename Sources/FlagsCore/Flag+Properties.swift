/// Typed property reads (R6). Each returns its default (or nil) when the property is missing or holds a
/// value of another type: a number is never read as a boolean, nor a string as a number.
extension Flag {
    /// The value of a String property, or `defaultValue`.
    public func string(forProperty name: String, default defaultValue: String?) -> String? {
        properties[name]?.stringValue ?? defaultValue
    }

    /// The value of a Number property as a Double, or `defaultValue`.
    public func number(forProperty name: String, default defaultValue: Double) -> Double {
        properties[name]?.numberValue ?? defaultValue
    }

    /// The value of a Boolean property, or `defaultValue`.
    public func bool(forProperty name: String, default defaultValue: Bool) -> Bool {
        properties[name]?.boolValue ?? defaultValue
    }

    /// The members of a JSON property holding an object, or nil.
    public func jsonObject(forProperty name: String) -> [String: JSONValue]? {
        properties[name]?.objectValue
    }

    /// The elements of a JSON property holding an array, or nil.
    public func jsonArray(forProperty name: String) -> [JSONValue]? {
        properties[name]?.arrayValue
    }
}

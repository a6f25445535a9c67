public import FeatureFlags

/// The SDK's untyped property reads. Their values are Foundation's shapes (`NSNull` among them), which is why
/// they live here and not in `FeatureFlags`: an app that never asks for them links no Foundation.
extension FeatureFlag {
    /// A JSON property holding an object, as a dictionary like the SDK's, or nil.
    ///
    /// Values are `String`, `Double`, `Bool`, `NSNull`, `[Any]` and `[String: Any]`, the shapes
    /// `JSONSerialization` gives, except that a boolean is a `Bool` and a number a `Double` (not one `NSNumber`
    /// for both), so `as? Bool` never takes `1` for `true`. Use `jsonObjectValue` for typed values.
    public func jsonObject(forProperty name: String) -> [String: Any]? {
        jsonObjectValue(forProperty: name)?.mapValues(\.foundationValue)
    }

    /// A JSON property holding an array, as `[Any]` like the SDK's, or nil. Elements as in `jsonObject`.
    public func jsonArray(forProperty name: String) -> [Any]? {
        jsonArrayValue(forProperty: name)?.map(\.foundationValue)
    }
}

import FlagsCore
import Foundation

/// The untyped shape the SDK's `jsonObject`/`jsonArray` return.
extension JSONValue {
    /// `String`, `Double`, `Bool`, `NSNull`, `[Any]` or `[String: Any]`.
    var foundationValue: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): value
        case .number(let value): value
        case .string(let value): value
        case .array(let elements): elements.map(\.foundationValue)
        case .object(let members): members.mapValues(\.foundationValue)
        }
    }
}

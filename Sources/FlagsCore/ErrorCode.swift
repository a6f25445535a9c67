/// The kind of a failure, for programs and tests to branch on (the shape swift-service-lifecycle gives its errors'
/// `Code`, written once): a name, typed by the error it belongs to (`Domain`), so that one error's codes never
/// compare equal to another's. Each error declares `typealias Code = ErrorCode<ItsType>` and its codes in an
/// `extension ErrorCode where Domain == ItsType`.
public struct ErrorCode<Domain>: Hashable, Sendable, CustomStringConvertible {
    /// The code's name, as logs and the CLI print it.
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

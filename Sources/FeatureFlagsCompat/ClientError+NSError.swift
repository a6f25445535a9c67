public import FeatureFlags
public import Foundation

/// The error domain of a failed refresh, as the Pushwoosh SDKs name it (R11).
public let PWFeatureFlagsErrorDomain = ClientError.errorDomain

/// The SDK's shape of a failure: an `NSError` in `PWFeatureFlagsErrorDomain` whose `code` is the R11 status.
///
/// `error as NSError` gives the same: a thrown `ClientError` bridges through `CustomNSError`.
extension ClientError: CustomNSError {
    /// The key of `userInfo` holding the `ClientError` itself, for code that wants more than the status.
    public static let userInfoKey = "FeatureFlagsClientError"

    /// The R11 status (`status`), as the SDK's error code.
    public var errorCode: Int { status }

    /// The description under `NSLocalizedDescriptionKey`, and the `ClientError` itself under `userInfoKey`.
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description, Self.userInfoKey: self] }

    /// An `NSError` in `PWFeatureFlagsErrorDomain` with `code` set to `status` and this error's description.
    public var featureFlagsError: NSError {
        NSError(
            domain: PWFeatureFlagsErrorDomain,
            code: status,
            userInfo: [NSLocalizedDescriptionKey: description, Self.userInfoKey: self]
        )
    }
}

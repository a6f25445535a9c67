import FlagsProtocol
public import Foundation

/// The error domain of a failed refresh, as the Pushwoosh SDKs name it (R11).
public let PWFeatureFlagsErrorDomain = RPCError.errorDomain

/// The SDK's shape of a failure: an `NSError` in `PWFeatureFlagsErrorDomain` whose `code` is the R11 status.
extension ClientError {
    /// The key of `userInfo` holding the `ClientError` itself, for code that wants more than the status.
    public static let userInfoKey = "FeatureFlagsClientError"

    /// The R11 status: the daemon's when it reports a failed refresh; `0` otherwise, which R11 gives to a
    /// request that got no HTTP response or was never sent (the daemon unreachable, a refused call).
    public var status: Int {
        guard case .rpc(let error) = self, let status = error.refreshStatus else { return 0 }
        return status
    }

    /// An `NSError` in `PWFeatureFlagsErrorDomain` with `code` set to `status` and this error's description.
    public var featureFlagsError: NSError {
        NSError(
            domain: PWFeatureFlagsErrorDomain,
            code: status,
            userInfo: [NSLocalizedDescriptionKey: description, Self.userInfoKey: self]
        )
    }
}

import FlagsProtocol

extension ClientError {
    /// The error domain of a failed refresh, as the Pushwoosh SDKs name it (R11).
    public static let errorDomain = RPCError.errorDomain

    /// The R11 status: the daemon's when it reports a failed refresh; `0` otherwise, which R11 gives to a
    /// request that got no HTTP response or was never sent (the daemon unreachable, a refused call).
    public var status: Int {
        guard case .rpc(let error) = self, let status = error.refreshStatus else { return 0 }
        return status
    }
}

extension ServerLimits {
    /// Whether a connection's next request is read while `pending` bytes of its output wait.
    ///
    /// A client that asks without reading stalls itself, not the daemon: its requests wait in the socket
    /// until it has read its output down to `MaxPendingBytes`. So the replies it asked for never pile up, and a
    /// client that reads, however many requests it sends at once, is never cut off for its own answers.
    func takesRequests(pending: Int) -> Bool {
        pending <= maxPendingBytes
    }

    /// Whether a connection's unsent output is past its bound, so the client is taken not to read and is cut.
    ///
    /// The message being sent (`firstMessage`: its unsent bytes) may be of any size: a client that reads gets
    /// the whole listing of whatever flag set the daemon accepted. What waits behind it may be one flag set
    /// (`flagSetBytes`, so a change of the whole set can arrive while the client reads a listing of it) plus
    /// `MaxPendingBytes`. `firstMessage` is asked only when the output is past that without it.
    func isOverrun(pending: Int, flagSetBytes: Int, firstMessage: () -> Int) -> Bool {
        let allowance = maxPendingBytes + flagSetBytes
        guard pending > allowance else { return false }
        return pending - firstMessage() > allowance
    }
}

#if canImport(Glibc)
    import Glibc
#endif

/// What a non-blocking send did.
public enum SendOutcome: Sendable, Equatable {
    /// This many bytes went out (possibly fewer than offered).
    case sent(Int)
    /// The socket's buffer is full (`EAGAIN`): try again when it is writable.
    case wouldBlock
    /// The socket failed (the peer is gone, for instance); it is of no further use.
    case failed(SystemError)

    init(_ error: SystemError) {
        self = error.errno == EAGAIN || error.errno == EWOULDBLOCK ? .wouldBlock : .failed(error)
    }
}

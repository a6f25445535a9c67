#if canImport(Glibc)
    import Glibc
#endif

/// Writes to a peer that has gone fail with EPIPE instead of killing the program with SIGPIPE.
///
/// Tests and the bench write to daemons they stop and to sockets the daemon closes on purpose; the kit's types
/// that open such sockets (`DaemonProcess`, `FakePushwooshServer`, `RawClient`, `LineClient`) call this, so no
/// suite has to.
public enum BrokenPipe {
    /// Set once, on first use.
    private static let ignored: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return true
    }()

    public static func ignore() {
        _ = ignored
    }
}

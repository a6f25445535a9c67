import UnixIO

/// Gives memory back to the system once large output has drained or been dropped.
///
/// Subscribers that do not read make the daemon queue up to `MaxPendingBytes` each; when they are cut off or
/// catch up, malloc keeps the freed memory for reuse, so the daemon stayed at its peak (88 MB measured after 250
/// such connections had gone, from 1.7 MB at start) until a restart. `malloc_trim` hands it back; it walks the
/// heap, so it runs at most once a second, and only after at least `threshold` of output was released.
///
/// Owned by the server loop's thread.
struct MemoryReturn {
    /// Output released at once (a connection's queue dropped or drained) that makes a trim worth its cost.
    static let threshold = 256 << 10
    /// The least time between two trims, in nanoseconds.
    static let spacing: UInt64 = 1_000_000_000

    private var due = false
    private var lastTrim: UInt64 = 0

    /// `bytes` of queued output were freed (sent or dropped).
    mutating func released(_ bytes: Int) {
        if bytes >= Self.threshold { due = true }
    }

    /// When the next trim may run, nil when none is due.
    var deadline: UInt64? { due ? lastTrim + Self.spacing : nil }

    /// Trims when one is due and the spacing allows.
    mutating func trimIfDue(now: UInt64) {
        guard due, now >= lastTrim + Self.spacing else { return }
        due = false
        lastTrim = now
        ProcessControl.returnFreedMemory()
    }
}

import UnixIO

/// Gives memory back to the system once large output has drained or been dropped, or a crowd of connections has
/// gone.
///
/// Subscribers that do not read make the daemon queue up to `MaxPendingBytes` each; when they are cut off or
/// catch up, malloc keeps the freed memory for reuse, so the daemon stayed at its peak (88 MB measured after 250
/// such connections had gone, from 1.7 MB at start) until a restart. Connections that come at once do the same
/// with their buffers: 2,000 clients that each sent a `refresh` and hung up, with `MaxConnections=8192`, left
/// 12 MB of a 28 MB peak resident for good. `malloc_trim` hands it back. It walks the heap, so it runs once
/// the burst is over (`quiet` after the last release, or `patience` after the first), at most four times a
/// second, and only after at least `threshold` of output was released or the connections open fell
/// `connectionDrop` below their peak since the last trim. Connections that come and go one at a time reuse the
/// same memory and never make a trim due.
///
/// Those two rules count what one loop knows it freed. Whatever else frees memory (calls on the bus, answers
/// written in one go) is caught by the memory itself: after a round of work, at most once per `spacing`, the
/// loop looks at how much freed memory malloc holds, and a trim is due when that grew by `freedGrowth` since the
/// last trim. A bus-only burst is given back as a socket burst is.
///
/// Owned by the event loop (`EventLoop`): one for the whole daemon.
struct MemoryReturn {
    /// Output released at once (a connection's queue dropped or drained) that makes a trim worth its cost.
    static let threshold = 256 << 10
    /// How far the connections open must fall below their peak to make a trim worth its cost (each held about
    /// 14 KB at the peak above).
    static let connectionDrop = 64
    /// The least time between two trims, in nanoseconds.
    static let spacing: UInt64 = 250_000_000
    /// How long after the last release a trim waits, so that it runs once a burst is over rather than inside it.
    static let quiet: UInt64 = 100_000_000
    /// The longest a due trim waits for the quiet, so that a burst that never ends still gets one.
    static let patience: UInt64 = 2_000_000_000
    /// Growth of the free memory malloc holds that makes a trim worth its cost.
    static let freedGrowth = 4 << 20

    private var due = false
    private var lastTrim: UInt64 = 0
    private var lastRelease: UInt64 = 0
    private var dueSince: UInt64 = 0
    /// The most connections open at once since the last trim. The count only rises by opening, so its peak is
    /// what was open just before some close (or is open now, which a later close sees).
    private var peak = 0
    /// When `look` last looked at malloc's free memory, and the least it found since the last trim.
    private var lastLook: UInt64 = 0
    private var lookDue = false
    private var leastFree = Int.max

    /// `bytes` of queued output were freed (sent or dropped).
    mutating func released(_ bytes: Int) {
        if bytes >= Self.threshold { makeDue() }
    }

    /// A connection closed, leaving `open` open.
    mutating func closed(leaving open: Int) {
        peak = max(peak, open + 1)
        if peak - open >= Self.connectionDrop { makeDue() }
    }

    /// After each round of the loop's work (and at `deadline`): looks at malloc's free memory when that is due,
    /// and trims when a trim is due and its time has come.
    mutating func tick(now: UInt64, freeBytes: () -> Int = ProcessControl.freeHeapBytes) {
        look(now: now, freeBytes: freeBytes)
        trimIfDue(now: now)
    }

    /// At most once per `spacing` (a round of work inside the spacing makes a look due at its end), a trim is
    /// made due when the free memory malloc holds grew by `freedGrowth` or more since the least it held after
    /// the last trim.
    private mutating func look(now: UInt64, freeBytes: () -> Int) {
        guard now &- lastLook >= Self.spacing else {
            lookDue = true
            return
        }
        lookDue = false
        lastLook = now
        let free = freeBytes()
        leastFree = min(leastFree, free)
        if free - leastFree >= Self.freedGrowth { makeDue(now: now) }
    }

    private mutating func makeDue(now: UInt64 = EngineClock.now()) {
        lastRelease = now
        if !due { dueSince = lastRelease }
        due = true
    }

    /// When the loop must call `tick` next: a look or a trim due; nil when neither is.
    var deadline: UInt64? {
        let look = lookDue ? lastLook + Self.spacing : nil
        guard let trim = trimDeadline else { return look }
        return min(trim, look ?? .max)
    }

    /// When the next trim may run, nil when none is due.
    private var trimDeadline: UInt64? {
        guard due else { return nil }
        return max(lastTrim + Self.spacing, min(lastRelease + Self.quiet, dueSince + Self.patience))
    }

    /// Trims when one is due and its time has come.
    private mutating func trimIfDue(now: UInt64) {
        guard let trimDeadline, now >= trimDeadline else { return }
        due = false
        lastTrim = now
        peak = 0
        // What was freed stays free in malloc's count once its pages are handed back: growth counts from here.
        leastFree = .max
        ProcessControl.returnFreedMemory()
    }
}

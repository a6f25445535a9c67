/// Runs reloads one at a time, and gives every caller the outcome of a reload that began after its request.
///
/// A caller that arrives while a reload runs cannot take that reload's outcome: it read the files before the
/// caller asked. It waits, and one reload then starts for every caller that arrived meanwhile (they are
/// coalesced), so that a burst of SIGHUPs and `reload` calls costs at most two reloads.
actor ReloadQueue<Outcome: Sendable> {
    /// Tickets handed out so far; a caller's ticket is the count when it arrived.
    private var requested = 0
    private var running = false
    /// The last finished reload, with the last ticket it covers.
    private var finished: (covers: Int, outcome: Outcome)?
    /// The callers waiting for a reload to end.
    private(set) var waiters: [CheckedContinuation<Void, Never>] = []

    /// Runs `reload`, or waits for a reload that covers this call, and returns its outcome.
    func run(_ reload: @Sendable () async -> Outcome) async -> Outcome {
        requested += 1
        let ticket = requested
        while true {
            if let finished, finished.covers >= ticket { return finished.outcome }
            if !running {
                running = true
                // Every caller that arrived before this point waits for this run, which reads the files after them.
                let covers = requested
                let outcome = await reload()
                finished = (covers, outcome)
                running = false
                let woken = waiters
                waiters = []
                for waiter in woken { waiter.resume() }
                return outcome
            }
            await withCheckedContinuation { waiters.append($0) }
        }
    }
}

/// Rung when something the `STATUS=` line shows may have changed (a fetch or its failure, the local file's
/// problem, the overrides), by the rooms that know it happened; `SystemdStatus` waits on it and sends the line
/// again. It lives down here so that those rooms need not know the room that shows the line.
enum StatusChange {
    /// One per process: a ring while nobody waits is kept for the next wait.
    static let signal = WakeSignal()
}

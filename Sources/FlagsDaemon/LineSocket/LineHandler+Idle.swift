/// Connections that hold a slot for nothing: no subscription, no request waiting, no output owed, and nothing
/// received for `IdleConnectionTimeout`. Without this, idle connections kept for ever filled `MaxConnections`.
extension LineHandler {
    /// Every `IdleConnectionTimeout`, closes the connections idle since the previous sweep (so a connection goes
    /// between once and twice the timeout after its last byte) and starts counting again. One clock read per
    /// wake of the loop, in `tick`; nothing on the request path but a flag set on each read.
    func sweepIdleIfDue() {
        let now = EngineClock.now()
        guard now >= nextIdleSweep else { return }
        nextIdleSweep = now + limits.idleTimeout
        let closed = engine.closeIdleConnections { !$0.subscriptions.isEmpty }
        if closed > 0 {
            logger.debug("closed idle connections (IdleConnectionTimeout)", ["CONNECTIONS": String(closed)])
        }
    }
}

/// What the framed steps keep for a handler, on the loop's thread: the limits in effect, the log, the flag set
/// the answers read and the idle sweep's next time. Every framed handler holds one; the steps read it through
/// `FramedHandler.framed`.
struct FramedState {
    /// The `[Daemon]` limits in effect (a reload replaces them).
    var limits: ServerLimits
    let logger: Logger
    /// The flag set the answers read: the newest the handler's change feed delivered.
    var snapshot: FlagSnapshot
    /// When `sweepIdleIfDue` next closes the connections idle since the sweep before (monotonic nanoseconds).
    var nextIdleSweep: UInt64

    /// The state at the handler's start: the first idle sweep one timeout from now.
    init(limits: ServerLimits, logger: Logger, snapshot: FlagSnapshot) {
        self.limits = limits
        self.logger = logger
        self.snapshot = snapshot
        self.nextIdleSweep = EngineClock.now() + limits.idleTimeout
    }
}

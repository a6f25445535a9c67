import FlagsCore
import PushwooshAPI

/// A wall-clock change: the timers are unaffected, the feed makes the disk cache's times right.
extension Refresher {
    /// The wall clock was set (NTP, an operator) or the machine resumed: intervals are unaffected, since they run
    /// on the boot clock, but the log says by how much the wall clock moved, the disk cache's wall fetch time is
    /// made right for the next start, a provisional cache is judged again, and the loop looks at its deadlines.
    func wallClockChanged() {
        guard !isRetired else { return }
        let boot = clock.bootNow()
        let wall = clock.wallNow()
        let jump = (wall - boot) - wallOffset
        wallOffset = wall - boot
        if abs(jump) >= 1 {
            logger.notice(
                "the wall clock changed by \(Int(jump.rounded())) s; refresh timers and flag ages are unaffected",
                ["CLOCK_JUMP_SECONDS": String(Int(jump.rounded())), "PWFLAGS_EVENT": "clock-changed"])
        }
        if let age = feed.wallClockChanged(jumped: abs(jump) >= 1) {
            policy.cacheAgeKnown(fetchedAt: boot - age)
            logger.notice(
                "the disk cache's age is known again after the wall-clock change", ["AGE_SECONDS": String(Int(age))])
            // The flags served are older than was thought: they expire sooner.
            feed.restamp(expiry)
        }
        publish()
        wake()
    }
}

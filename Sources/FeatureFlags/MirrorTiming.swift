import FoundationEssentials

/// The subscriber thread's delays and clock; the tests shorten the delays and inject the clock.
struct MirrorTiming: Sendable {
    /// The first wait before reconnecting.
    var initialBackoff: Duration = .milliseconds(50)
    /// The longest wait between reconnection attempts.
    var maximumBackoff: Duration = .seconds(2)
    /// How often a connected mirror re-reads `status.expiresAt`: after a refresh that changed nothing the
    /// daemon sends no notification, yet its flags got younger.
    var statusInterval: Duration = .seconds(60)
    /// How soon after a change the mirror re-reads `status.expiresAt` when the `flagsChanged` carried none (a
    /// daemon older than that member sends it before it records the new fetch time).
    var settleDelay: Duration = .seconds(1)
    /// Wall-clock time, which `expiresAt` is stated in.
    var now: @Sendable () -> Date = { Date() }

    static let standard = MirrorTiming()
}

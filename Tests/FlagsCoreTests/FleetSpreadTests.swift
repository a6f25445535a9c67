import FlagsCore
import TestSupport
import Testing

/// A fleet is not a herd (F1-F3): per-device phases, the slot grid, the session start's delay, and Pushwoosh's
/// `Retry-After`, with made-up boot-clock times.
@Suite(.hangLimit) struct FleetSpreadTests {
    let t0 = 1_000_000.0
    let hour = 3600.0

    func policy(phase: Double, _ edit: (inout Configuration) -> Void = { _ in }) -> RefreshPolicy {
        var configuration = Configuration()
        edit(&configuration)
        return RefreshPolicy(settings: RefreshPolicy.Settings(configuration), phase: phase)
    }

    /// A policy whose session-start request (no cache) completed at `time`.
    func fetched(phase: Double, at time: Double, _ edit: (inout Configuration) -> Void = { _ in }) -> RefreshPolicy {
        var policy = policy(phase: phase, edit)
        policy.start(now: time, cachedFetchedAt: nil)
        #expect(policy.due(now: time).refresh == [.sessionStart])
        policy.requestStarted(now: time)
        policy.requestFinished(.complete, automatic: true, now: time, jitter: 0.5)
        return policy
    }

    @Test("A device's phase is stable, in [0, 1), and a fleet's phases cover the range evenly")
    func phases() {
        #expect(RefreshPolicy.phase(forDevice: "hwid-1") == RefreshPolicy.phase(forDevice: "hwid-1"))
        #expect(RefreshPolicy.phase(forDevice: "hwid-1") != RefreshPolicy.phase(forDevice: "hwid-2"))
        var deciles = [Int](repeating: 0, count: 10)
        for device in 0..<10_000 {
            let phase = RefreshPolicy.phase(forDevice: "device-\(device)")
            #expect(phase >= 0 && phase < 1)
            deciles[Int(phase * 10)] += 1
        }
        #expect(deciles.allSatisfy { (900...1100).contains($0) }, "\(deciles)")
    }

    @Test("F1: the interval refresh lands on the device's slot, then exactly every RefreshInterval")
    func intervalOnTheSlot() {
        // Slots of phase 0.25 on a one-hour grid: 900 s past every hour of the boot clock.
        var policy = fetched(phase: 0.25, at: 2000)
        #expect(policy.nextRefreshAt(now: 2000) == 8100)
        #expect(policy.due(now: 8099).refresh.isEmpty)
        #expect(policy.due(now: 8100).refresh == [.interval])
        policy.requestStarted(now: 8100)
        policy.requestFinished(.complete, automatic: true, now: 8100.2, jitter: 0.5)
        // The reply took 0.2 s: the next slot is still one interval on, not two.
        #expect(policy.nextRefreshAt(now: 8101) == 8100 + hour)
        // A timer that woke 2 s late still keeps the slot (up to a tenth of the spread late).
        policy.requestStarted(now: 8102 + hour)
        policy.requestFinished(.complete, automatic: true, now: 8102.5 + hour, jitter: 0.5)
        #expect(policy.nextRefreshAt(now: 8103 + hour) == 8100 + 2 * hour)
    }

    @Test("F1: a fleet that fetched together spreads its next refreshes evenly over one RefreshInterval")
    func fleetSpreadsAfterOneInterval() {
        var dueTimes: [Double] = []
        for device in 0..<100 {
            let policy = fetched(phase: Double(device) / 100, at: t0)
            dueTimes.append(policy.nextRefreshAt(now: t0) ?? 0)
        }
        // A device whose slot came at most a tenth of the spread before the fetch counts it as on its slot.
        #expect(dueTimes.allSatisfy { $0 >= t0 + 0.9 * hour && $0 < t0 + 2 * hour })
        var minutes = [Int](repeating: 0, count: 66)
        for time in dueTimes { minutes[Int((time - t0 - 0.9 * hour) / 60)] += 1 }
        #expect(minutes.max() ?? 0 <= 2)
    }

    @Test("F1: RefreshSpread=0 gives the SDK's timing back; a spread wider than RefreshInterval is cut to it")
    func spreadZeroAndCap() {
        let sdk = fetched(phase: 0.7, at: t0) { $0.refreshSpread = .zero }
        #expect(sdk.nextRefreshAt(now: t0) == t0 + hour)
        let short = fetched(phase: 0.5, at: 1000) {
            $0.refreshInterval = .seconds(20)
            $0.refreshSpread = .seconds(3600)
        }
        #expect(short.settings.effectiveSpread == 20)
        // Slots at 10 s past every 20 s: the first at or after 1020 is 1030.
        #expect(short.nextRefreshAt(now: 1000) == 1030)
    }

    @Test("F2: a session start with usable stored flags waits for the device's slot; the flags are served")
    func sessionStartWaitsForTheSlot() {
        var policy = policy(phase: 0.5)
        policy.start(now: 100_000, cachedFetchedAt: 99_500)
        // The slot of phase 0.5 on a one-hour grid after 100 000 s: 28 × 3600 + 1800 = 102 600.
        #expect(policy.sessionStartDueAt == 102_600)
        #expect(policy.hasValidFlags(now: 100_000))
        #expect(policy.due(now: 102_599).refresh.isEmpty)
        #expect(policy.nextRefreshAt(now: 100_000) == 102_600)
        #expect(policy.due(now: 102_600).refresh == [.sessionStart])
    }

    @Test("F2: without usable stored flags the session start's request goes at once")
    func sessionStartWithoutFlagsGoesAtOnce() {
        var policy = policy(phase: 0.5)
        policy.start(now: 100_000, cachedFetchedAt: nil)
        #expect(policy.due(now: 100_000).refresh == [.sessionStart])
        var expired = self.policy(phase: 0.5)
        expired.start(now: 100_000, cachedFetchedAt: 100_000 - 25 * hour)
        #expect(expired.due(now: 100_000).refresh == [.sessionStart])
    }

    @Test("F2: a slot further than SessionStartDelay gives way to the phase's share of the delay; 0 is at once")
    func sessionStartDelayBounds() {
        var short = policy(phase: 0.5) { $0.sessionStartDelay = .seconds(600) }
        short.start(now: 100_000, cachedFetchedAt: 99_000)
        #expect(short.sessionStartDueAt == 100_300)
        var none = policy(phase: 0.5) { $0.sessionStartDelay = .zero }
        none.start(now: 100_000, cachedFetchedAt: 99_000)
        #expect(none.due(now: 100_000).refresh == [.sessionStart])
    }

    @Test("F2: a user change during the delay sends at once; a pending trigger takes the session start along")
    func otherTriggersDoNotWait() {
        var policy = policy(phase: 0.5)
        policy.start(now: 100_000, cachedFetchedAt: 99_000)
        let registered = policy.pushRegistered(now: 100_010)
        #expect(registered)
        #expect(policy.due(now: 100_010).refresh == [.sessionStart, .pushRegistered])
        var changed = self.policy(phase: 0.5)
        changed.start(now: 100_000, cachedFetchedAt: 99_000)
        changed.userChanged(now: 100_020)
        #expect(changed.due(now: 100_020).refresh.contains(.userChanged))
    }

    @Test("F3: Retry-After holds every trigger until it expires; then the next request goes")
    func retryAfterHoldsEverything() {
        var policy = fetched(phase: 0, at: t0) { $0.refreshSpread = .zero }
        let failedAt = t0 + hour
        policy.requestStarted(now: failedAt)
        policy.requestFinished(.failed, automatic: true, now: failedAt, jitter: 0, retryAfter: 120)
        #expect(policy.hold(now: failedAt + 1) == failedAt + 120)
        policy.userChanged(now: failedAt + 5)
        let registered = policy.pushRegistered(now: failedAt + 6)
        #expect(registered)
        #expect(policy.due(now: failedAt + 119).refresh.isEmpty)
        #expect(policy.nextRefreshAt(now: failedAt + 10) == failedAt + 120)
        #expect(policy.nextWake(now: failedAt + 10) == failedAt + 120)
        let due = policy.due(now: failedAt + 120)
        #expect(due.refresh.isSuperset(of: [.userChanged, .pushRegistered]))
        #expect(policy.hold(now: failedAt + 120) == nil)
    }

    @Test("F3: the automatic retry comes after the hold, with full jitter on top")
    func retryAfterTheHold() {
        var policy = fetched(phase: 0, at: t0) { $0.refreshSpread = .zero }
        policy.requestStarted(now: t0 + hour)
        policy.requestFinished(.failed, automatic: true, now: t0 + hour, jitter: 0.5, retryAfter: 600)
        #expect(policy.retryAt == t0 + hour + 600 + 15)
    }

    @Test("F3: a caller's failed request holds too; a complete response ends a hold")
    func callerHoldAndRelease() {
        var policy = fetched(phase: 0, at: t0)
        policy.requestStarted(now: t0 + 10)
        policy.requestFinished(.failed, automatic: false, now: t0 + 10, jitter: 0.5, retryAfter: 30)
        #expect(policy.hold(now: t0 + 20) == t0 + 40)
        policy.requestStarted(now: t0 + 40)
        policy.requestFinished(.complete, automatic: true, now: t0 + 41, jitter: 0.5, retryAfter: nil)
        #expect(policy.heldUntil == nil)
    }

    @Test("F3: an absurd Retry-After is capped at CacheMaxAge", arguments: [1e12, .infinity])
    func absurdRetryAfterIsCapped(retryAfter: Double) {
        var policy = fetched(phase: 0, at: t0)
        policy.requestStarted(now: t0 + 10)
        policy.requestFinished(.failed, automatic: true, now: t0 + 10, jitter: 0.5, retryAfter: retryAfter)
        if retryAfter.isFinite {
            #expect(policy.hold(now: t0 + 10) == t0 + 10 + 24 * hour)
        } else {
            #expect(policy.hold(now: t0 + 10) == nil)
        }
    }
}

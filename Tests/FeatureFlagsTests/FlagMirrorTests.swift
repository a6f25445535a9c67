import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing

@testable import FeatureFlags

/// The mirror's rules, with time passed in: reconciliation, ordering, and R15 expiry while disconnected.
@Suite(.hangLimit) struct FlagMirrorTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let checkout = Flag(key: "new_checkout", isEnabled: true, ruleId: "r_1", properties: ["color": "green"])
    static let banner = Flag(key: "banner", isEnabled: false, ruleId: "default")

    static func subscribed(expiresAt: Date? = start + 24 * 3600) -> FlagMirror {
        var mirror = FlagMirror()
        _ = mirror.subscribed(
            to: FlagListing(revision: 3, flags: [checkout, banner], subscription: "s1"), expiresAt: expiresAt)
        return mirror
    }

    @Test("Before the first snapshot the mirror is empty; the snapshot's flags are the diff")
    func firstSnapshot() {
        var mirror = FlagMirror()
        #expect(!mirror.hasSnapshot)
        let diff = mirror.subscribed(to: FlagListing(revision: 1, flags: [Self.checkout]), expiresAt: nil)
        #expect(mirror.hasSnapshot && mirror.isConnected)
        #expect(diff == FlagDiff(changed: [Self.checkout]))
    }

    @Test("A flagsChanged applies in order; one the mirror already holds changes nothing")
    func appliesNotificationsInOrder() {
        var mirror = Self.subscribed()
        var moved = Self.checkout
        moved.ruleId = "r_2"
        let diff = mirror.apply(FlagsChanged(subscription: "s1", revision: 4, changed: [moved], removed: ["banner"]))
        #expect(diff == FlagDiff(changed: [moved], removed: ["banner"]))
        #expect(mirror.flags["new_checkout"] == moved && mirror.flags["banner"] == nil)
        let stale = FlagsChanged(subscription: "s1", revision: 4, changed: [Self.banner], removed: [])
        #expect(mirror.apply(stale).isEmpty)
        #expect(mirror.flags["banner"] == nil)
    }

    @Test("A reconnect reconciles: only what differs from the old mirror is reported")
    func reconnectReportsTheDifference() {
        var mirror = Self.subscribed()
        mirror.disconnected()
        var disabled = Self.checkout
        disabled.isEnabled = false
        // A restarted daemon counts revisions from the start again: the new snapshot wins regardless.
        let diff = mirror.subscribed(to: FlagListing(revision: 1, flags: [disabled, Self.banner]), expiresAt: nil)
        #expect(diff == FlagDiff(changed: [disabled]))
        #expect(mirror.generation == 2)
        #expect(
            mirror.subscribed(to: FlagListing(revision: 1, flags: [disabled, Self.banner]), expiresAt: nil).isEmpty)
    }

    @Test("A refresh answer applies only within the subscription it was sent under, and only when newer")
    func refreshAnswersRespectTheSubscription() {
        var mirror = Self.subscribed()
        let newer = FlagListing(revision: 5, flags: [Self.banner])
        let later = Self.start + 25 * 3600
        #expect(mirror.applyRefresh(newer, generation: mirror.generation - 1, expiresAt: later).isEmpty)
        #expect(mirror.expiresAt == Self.start + 24 * 3600)
        // Identical flags fetched again: nothing changes but their age.
        let same = FlagListing(revision: 3, flags: [])
        #expect(mirror.applyRefresh(same, generation: mirror.generation, expiresAt: later).isEmpty)
        #expect(mirror.expiresAt == later)
        let diff = mirror.applyRefresh(newer, generation: mirror.generation, expiresAt: later)
        #expect(diff == FlagDiff(removed: ["new_checkout"]))
        #expect(mirror.revision == 5)
    }

    @Test("R15: while disconnected the flags stay until expiresAt, then go")
    func expiresWhileDisconnected() {
        var mirror = Self.subscribed()
        mirror.disconnected()
        let remaining = mirror.timeUntilExpiry(now: Self.start) ?? 0
        #expect(abs(remaining - 24 * 3600) < 0.001)
        #expect(mirror.expireIfDue(now: Self.start + 24 * 3600 - 1).isEmpty)
        #expect(mirror.flags.count == 2)
        let diff = mirror.expireIfDue(now: Self.start + 24 * 3600)
        #expect(diff == FlagDiff(removed: ["banner", "new_checkout"]))
        #expect(mirror.flags.isEmpty && mirror.hasSnapshot)
        #expect(mirror.timeUntilExpiry(now: Self.start + 24 * 3600) == nil)
    }

    @Test("R15: a connected mirror leaves expiry to the daemon, and flags without expiresAt never expire")
    func noLocalExpiryWhileConnectedOrWithoutAge() {
        var connected = Self.subscribed()
        #expect(connected.expireIfDue(now: Self.start + 48 * 3600).isEmpty)
        #expect(connected.timeUntilExpiry(now: Self.start) == nil)
        var fromFile = Self.subscribed(expiresAt: nil)
        fromFile.disconnected()
        #expect(fromFile.expireIfDue(now: .distantFuture).isEmpty)
        #expect(fromFile.flags.count == 2)
    }

    @Test("R15: a status read after the connection came back moves the expiry")
    func statusMovesTheExpiry() {
        var mirror = Self.subscribed()
        mirror.setExpiry(Self.start + 48 * 3600)
        mirror.disconnected()
        #expect(mirror.expireIfDue(now: Self.start + 24 * 3600).isEmpty)
        #expect(!mirror.expireIfDue(now: Self.start + 48 * 3600).isEmpty)
    }

    @Test("The mirror resumes from the epoch and revision it holds, the same after an unchanged answer")
    func resumePointFollowsTheStream() {
        var mirror = FlagMirror()
        #expect(mirror.resumePoint == nil)
        _ = mirror.subscribed(
            to: FlagListing(epoch: "e1", revision: 3, flags: [Self.checkout], subscription: "s1"), expiresAt: nil)
        #expect(mirror.resumePoint == StreamPosition(epoch: "e1", revision: 3))
        _ = mirror.apply(
            FlagsChanged(subscription: "s1", epoch: "e1", revision: 4, changed: [Self.banner], removed: []))
        #expect(mirror.resumePoint == StreamPosition(epoch: "e1", revision: 4))
        mirror.disconnected()
        let diff = mirror.subscribed(
            to: FlagListing(epoch: "e1", revision: 4, flags: [], subscription: "s2", unchanged: true), expiresAt: nil)
        #expect(diff.isEmpty)
        #expect(mirror.isConnected && mirror.flags.count == 2)
        #expect(mirror.resumePoint == StreamPosition(epoch: "e1", revision: 4))
    }

    @Test("Flags dropped for their age leave nothing to resume from: the next listen asks for the listing")
    func expiryForgetsTheResumePoint() {
        var mirror = FlagMirror()
        _ = mirror.subscribed(
            to: FlagListing(epoch: "e1", revision: 3, flags: [Self.checkout], subscription: "s1"),
            expiresAt: Self.start)
        mirror.disconnected()
        _ = mirror.expireIfDue(now: Self.start + 1)
        #expect(mirror.flags.isEmpty)
        #expect(mirror.resumePoint == nil)
    }

    @Test("A daemon without an epoch gives nothing to resume from")
    func noEpochNoResumePoint() {
        var mirror = FlagMirror()
        _ = mirror.subscribed(to: FlagListing(revision: 3, flags: [Self.checkout], subscription: "s1"), expiresAt: nil)
        #expect(mirror.resumePoint == nil)
    }

    static let precomposed = Flag(key: "caf\u{E9}", isEnabled: true, ruleId: "r_precomposed")
    static let decomposed = Flag(key: "cafe\u{301}", isEnabled: false, ruleId: "r_decomposed")

    @Test("R2: canonically equivalent keys that differ in their bytes are two flags through a change, as in the daemon")
    func equivalentKeysStayApartThroughAChange() {
        var mirror = FlagMirror()
        _ = mirror.subscribed(to: FlagListing(revision: 1, flags: [Self.precomposed, Self.decomposed]), expiresAt: nil)
        #expect(mirror.flags.count == 2)
        var moved = Self.precomposed
        moved.ruleId = "r_moved"
        let diff = mirror.apply(FlagsChanged(subscription: "s1", revision: 2, changed: [moved], removed: []))
        #expect(diff == FlagDiff(changed: [moved]))
        #expect(mirror.flags.count == 2)
        #expect(mirror.flags[FlagKey("caf\u{E9}")]?.ruleId == "r_moved")
        #expect(mirror.flags[FlagKey("cafe\u{301}")]?.ruleId == "r_decomposed")
        _ = mirror.apply(FlagsChanged(subscription: "s1", revision: 3, changed: [], removed: ["cafe\u{301}"]))
        #expect(mirror.flags.count == 1)
        #expect(mirror.flags[FlagKey("caf\u{E9}")]?.ruleId == "r_moved")
    }

    @Test("R15: at expiry the mirror keeps the overridden flags, as the daemon does, and drops the rest")
    func expiryKeepsOverriddenFlags() {
        var overridden = Flag(
            key: "forced", isEnabled: true, ruleId: Flag.overrideRuleId, source: .override,
            sourceValue: FlagValue(isEnabled: false, ruleId: "r_1"))
        overridden.properties = ["color": "red"]
        var mirror = FlagMirror()
        _ = mirror.subscribed(
            to: FlagListing(revision: 3, flags: [Self.checkout, overridden], subscription: "s1"), expiresAt: Self.start)
        mirror.disconnected()
        let diff = mirror.expireIfDue(now: Self.start)
        // The source's value of the overridden flag expired with the source's flags.
        var kept = overridden
        kept.sourceValue = nil
        #expect(diff == FlagDiff(changed: [kept], removed: ["new_checkout"]))
        #expect(mirror.flags.sorted == [kept])
        #expect(mirror.timeUntilExpiry(now: Self.start + 1) == nil)
    }
}

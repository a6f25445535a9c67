import FlagsCore
import TestSupport
import Testing

@Suite("Impression ledger (R18)", .hangLimit)
struct ImpressionLedgerTests {
    let checkout = Flag(key: "new_checkout", isEnabled: true, ruleId: "r_1")

    @Test("R18: one impression per flag, rule and state per session; a new session reports again")
    func oncePerSession() {
        var ledger = ImpressionLedger()
        let key = ImpressionLedger.Key(checkout)
        #expect(ledger.claim(key, in: Self.session(1)) == .send)
        #expect(ledger.claim(key, in: Self.session(1)) == .inFlight)
        ledger.finish(key, in: Self.session(1), sent: true)
        #expect(ledger.claim(key, in: Self.session(1)) == .duplicate)
        #expect(ledger.claim(key, in: Self.session(2)) == .send)
    }

    @Test("R18: another rule or another state is another impression")
    func ruleAndStateCount() {
        var ledger = ImpressionLedger()
        ledger.finish(claimed(&ledger, checkout), in: Self.session(1), sent: true)
        var otherRule = checkout
        otherRule.ruleId = "r_2"
        var disabled = checkout
        disabled.isEnabled = false
        #expect(ledger.claim(ImpressionLedger.Key(otherRule), in: Self.session(1)) == .send)
        #expect(ledger.claim(ImpressionLedger.Key(disabled), in: Self.session(1)) == .send)
    }

    @Test("R18: a failed send is not recorded, so the next call sends it again")
    func failedSendIsRetried() {
        var ledger = ImpressionLedger()
        let key = claimed(&ledger, checkout)
        ledger.finish(key, in: Self.session(1), sent: false)
        #expect(ledger.claim(key, in: Self.session(1)) == .send)
    }

    @Test("R2: keys and rule ids that differ only in their Unicode form are different impressions")
    func exactKeys() {
        var ledger = ImpressionLedger()
        let precomposed = Flag(key: "caf\u{E9}", isEnabled: true, ruleId: "r_\u{E9}")
        let decomposed = Flag(key: "cafe\u{301}", isEnabled: true, ruleId: "r_\u{E9}")
        let otherRuleForm = Flag(key: "caf\u{E9}", isEnabled: true, ruleId: "r_e\u{301}")
        ledger.finish(claimed(&ledger, precomposed), in: Self.session(1), sent: true)
        #expect(ledger.claim(ImpressionLedger.Key(decomposed), in: Self.session(1)) == .send)
        #expect(ledger.claim(ImpressionLedger.Key(otherRuleForm), in: Self.session(1)) == .send)
        #expect(ledger.claim(ImpressionLedger.Key(precomposed), in: Self.session(1)) == .duplicate)
    }

    @Test("R8d, R18: another user in the same session reports every impression again")
    func userChangeSendsAgain() {
        // With Lifecycle=client a user change in the background starts no session: the user alone tells them apart.
        var ledger = ImpressionLedger()
        let key = ImpressionLedger.Key(checkout)
        let bob = ImpressionLedger.Period(session: 1, userId: "bob")
        ledger.finish(claimed(&ledger, checkout), in: Self.session(1), sent: true)
        #expect(ledger.claim(key, in: bob) == .send)
        ledger.finish(key, in: bob, sent: true)
        #expect(ledger.claim(key, in: bob) == .duplicate)
        // Back to the first user: a change again, so reported again.
        #expect(ledger.claim(key, in: Self.session(1)) == .send)
    }

    @Test("R18: a send of the previous user that ends after the change is not recorded for the new one")
    func lateSendOfThePreviousUserIsDropped() {
        var ledger = ImpressionLedger()
        let key = claimed(&ledger, checkout)
        let bob = ImpressionLedger.Period(session: 1, userId: "bob")
        #expect(ledger.claim(key, in: bob) == .send)
        ledger.finish(key, in: Self.session(1), sent: true)
        #expect(ledger.claim(key, in: bob) == .inFlight)
    }

    /// Session `number` of the device's own user (no user id set).
    private static func session(_ number: Int) -> ImpressionLedger.Period {
        ImpressionLedger.Period(session: number, userId: "")
    }

    /// Claims `flag`'s impression in session 1, which must be granted.
    private func claimed(_ ledger: inout ImpressionLedger, _ flag: Flag) -> ImpressionLedger.Key {
        let key = ImpressionLedger.Key(flag)
        #expect(ledger.claim(key, in: Self.session(1)) == .send)
        return key
    }
}

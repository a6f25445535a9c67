import FlagsCore
import PushwooshAPI
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// The impression reporter's bookkeeping (R18) and its bound on sends (30 at once, then one a second).
@Suite(.hangLimit) struct ImpressionReporterTests {
    static let flag = Flag(key: "new_checkout", isEnabled: true, ruleId: "r_1", properties: [:])

    struct Rig {
        let fetcher = ScriptedFetcher()
        let store = FlagStore()
        let clock = ManualClock()
        let session = SessionNumber()
        let reporter: ImpressionReporter

        init(flags: [Flag] = [ImpressionReporterTests.flag]) {
            store.replace(with: FlagSet(flags))
            let session = self.session
            reporter = ImpressionReporter(
                fetcher: fetcher, store: store, logger: Logger(level: .err), clock: clock
            ) { (session.value, "user-1") }
        }

        /// Waits until `count` sends are held by the fetcher.
        func waitForHeldSends(_ count: Int) async {
            while fetcher.waitingImpressions < count, !Task.isCancelled { await Task.yield() }
        }
    }

    /// The session the reporter reads, moved by the test.
    final class SessionNumber: Sendable {
        private let number = Locked(1)

        var value: Int {
            get { number.withLock { $0 } }
            set { number.withLock { $0 = newValue } }
        }
    }

    @Test("R18: a send in flight for session N is not confused with the same impression's send in session N + 1")
    func inFlightSendsAreKeyedBySession() async {
        let rig = Rig()
        rig.fetcher.holdImpressions()
        let first = Task { await rig.reporter.logImpression(key: "new_checkout") }
        await rig.waitForHeldSends(1)
        rig.session.value = 2
        let second = Task { await rig.reporter.logImpression(key: "new_checkout") }
        await rig.waitForHeldSends(2)
        // Session 1's send ends first; session 2's is still in flight.
        rig.fetcher.release(.success(()))
        #expect(await first.value == .sent)
        // A third caller in session 2 shares session 2's send and gets its outcome.
        let third = Task { await rig.reporter.logImpression(key: "new_checkout") }
        for _ in 0..<100 { await Task.yield() }
        rig.fetcher.release(.failure(.httpStatus(503)))
        #expect(await second.value == .failed(status: 503))
        #expect(await third.value == .failed(status: 503))
        // R18: the failure was not recorded as sent, so the next call sends it again.
        let again = Task { await rig.reporter.logImpression(key: "new_checkout") }
        await rig.waitForHeldSends(1)
        rig.fetcher.release(.success(()))
        #expect(await again.value == .sent)
        #expect(rig.fetcher.impressions.count == 3)
    }

    @Test("Sends are bounded: 30 at once, then one a second; one held back is failed with status 0 and sent later")
    func sendsAreBounded() async {
        let flags = (0..<40).map { Flag(key: "flag_\($0)", isEnabled: true, ruleId: "r", properties: [:]) }
        let rig = Rig(flags: flags)
        var outcomes: [ImpressionReporter.Outcome] = []
        for flag in flags { outcomes.append(await rig.reporter.logImpression(key: flag.key)) }
        #expect(outcomes.filter { $0 == .sent }.count == 30)
        #expect(outcomes.suffix(10).allSatisfy { $0 == .failed(status: 0) })
        #expect(rig.fetcher.impressions.count == 30)
        // A second later one more goes: the held-back impression was not lost (R18).
        rig.clock.advance(by: 1)
        #expect(await rig.reporter.logImpression(key: "flag_35") == .sent)
        #expect(await rig.reporter.logImpression(key: "flag_36") == .failed(status: 0))
        #expect(await rig.reporter.logImpression(key: "flag_0") == .duplicate)
        #expect(rig.fetcher.impressions.count == 31)
    }
}

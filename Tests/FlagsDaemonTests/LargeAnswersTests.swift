import Testing

@testable import FlagsDaemon

/// The bus's large answers wait their turn: one at a time, the users taking turns, a bounded number waiting, at a
/// bounded pace.
@Suite(.hangLimit) struct LargeAnswersTests {
    @Test func usersTakeTurnsAndEachUsersCallsKeepTheirOrder() {
        var answers = LargeAnswers<String>(perUser: 16)
        let queued =
            ["a1", "a2", "a3"].allSatisfy { answers.queue($0, size: 0, from: 1000) }
            && answers.queue("b1", size: 0, from: 1001) && answers.queue("c1", size: 0, from: 0)
        #expect(queued)
        var order: [String] = []
        while let call = answers.next(now: 0) { order.append(call) }
        // The flooder's second and third calls wait behind the others' first.
        #expect(order == ["a1", "b1", "c1", "a2", "a3"])
        #expect(answers.isEmpty && answers.count == 0)
    }

    @Test func aUserPastItsShareIsRefusedAndOthersStillGetIn() {
        var answers = LargeAnswers<Int>(perUser: 4)
        let share = (0..<4).allSatisfy { answers.queue($0, size: 0, from: 1000) }
        #expect(share)
        let pastShare = answers.queue(99, size: 0, from: 1000)
        #expect(!pastShare)
        let another = answers.queue(7, size: 0, from: 1001)
        #expect(another)
        #expect(answers.count == 5)
        // Its share frees as it is answered.
        let first = answers.next(now: 0)
        #expect(first == 0)
        let again = answers.queue(100, size: 0, from: 1000)
        #expect(again)
    }

    @Test func theWholeQueueIsBounded() {
        var answers = LargeAnswers<Int>(perUser: 64)
        var call = 0
        while answers.count < LargeAnswers<Int>.inAll {
            let queued = answers.queue(call, size: 0, from: UInt32(1000 + call / 64))
            #expect(queued)
            call += 1
        }
        let pastAll = answers.queue(0, size: 0, from: 9999)
        #expect(!pastAll)
        answers.removeAll()
        let none = answers.next(now: 0)
        #expect(answers.isEmpty && none == nil)
        let again = answers.queue(1, size: 0, from: 9999)
        #expect(again)
    }

    /// 32 MiB a second in all: after a 16 MiB answer the next waits half a second, whoever asked.
    @Test func answersArePacedByTheirSize() {
        var answers = LargeAnswers<String>(perUser: 16)
        let queued = answers.queue("a1", size: 16 << 20, from: 1000) && answers.queue("b1", size: 1 << 20, from: 1001)
        #expect(queued)
        let first = answers.next(now: 1_000)
        #expect(first == "a1")
        #expect(answers.readyAt == 1_000 + 500_000_000)
        let early = answers.next(now: 1_000 + 499_999_999)
        #expect(early == nil && answers.count == 1)
        let second = answers.next(now: 1_000 + 500_000_000)
        #expect(second == "b1")
        #expect(answers.readyAt == 1_000 + 500_000_000 + 31_250_000)
    }
}

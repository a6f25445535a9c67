import Testing

@testable import FlagsDaemon

/// The bus's large answers wait their turn: one at a time, the senders taking turns, a bounded number waiting.
@Suite(.hangLimit) struct LargeAnswersTests {
    @Test func sendersTakeTurnsAndEachSendersCallsKeepTheirOrder() {
        var answers = LargeAnswers<String>()
        for call in ["a1", "a2", "a3"] {
            let queued = answers.queue(call, size: 0, from: ":1.1")
            #expect(queued)
        }
        let others = answers.queue("b1", size: 0, from: ":1.2") && answers.queue("c1", size: 0, from: ":1.3")
        #expect(others)
        var order: [String] = []
        while let call = answers.next(now: 0) { order.append(call) }
        // The flooder's second and third calls wait behind the others' first.
        #expect(order == ["a1", "b1", "c1", "a2", "a3"])
        #expect(answers.isEmpty && answers.count == 0)
    }

    @Test func aSenderPastItsShareIsRefusedAndOthersStillGetIn() {
        var answers = LargeAnswers<Int>()
        let share = (0..<LargeAnswers<Int>.perSender).allSatisfy { answers.queue($0, size: 0, from: ":1.1") }
        #expect(share)
        let pastShare = answers.queue(99, size: 0, from: ":1.1")
        #expect(!pastShare)
        let another = answers.queue(7, size: 0, from: ":1.2")
        #expect(another)
        #expect(answers.count == LargeAnswers<Int>.perSender + 1)
        // Its share frees as it is answered.
        let first = answers.next(now: 0)
        #expect(first == 0)
        let again = answers.queue(100, size: 0, from: ":1.1")
        #expect(again)
    }

    @Test func theWholeQueueIsBounded() {
        var answers = LargeAnswers<Int>()
        var sender = 0
        while answers.count < LargeAnswers<Int>.inAll {
            let queued = answers.queue(sender, size: 0, from: ":1.\(sender / LargeAnswers<Int>.perSender)")
            #expect(queued)
            sender += 1
        }
        let pastAll = answers.queue(0, size: 0, from: ":9.9")
        #expect(!pastAll)
        answers.removeAll()
        let none = answers.next(now: 0)
        #expect(answers.isEmpty && none == nil)
        let again = answers.queue(1, size: 0, from: ":9.9")
        #expect(again)
    }

    /// 32 MiB a second in all: after a 16 MiB answer the next waits half a second, whoever asked.
    @Test func answersArePacedByTheirSize() {
        var answers = LargeAnswers<String>()
        let queued =
            answers.queue("a1", size: 16 << 20, from: ":1.1") && answers.queue("b1", size: 1 << 20, from: ":1.2")
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

import Foundation
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// The one event loop: each descriptor's events reach the member that added it and no other, a member's
/// deadline ticks it without an event, and what other threads hand the loop runs there, in order.
@Suite(.hangLimit) struct EventLoopTests {
    /// A member that records what the loop called, on the loop's thread.
    final class Recorder: LoopMember, @unchecked Sendable {
        let events = Locked<[Int32]>([])
        let ticks = Locked(0)
        let ticked = DispatchSemaphore(value: 0)
        let heard = DispatchSemaphore(value: 0)
        /// A deadline the loop should tick this member at (monotonic nanoseconds), until it did.
        let deadline = Locked<UInt64?>(nil)
        /// Set and read on the loop's thread.
        var membership: EventLoop.Membership?

        func handle(_ events: Epoll.Events, on descriptor: Int32) {
            self.events.withLock { $0.append(descriptor) }
            heard.signal()
        }

        func woke() {}

        func nextDeadline() -> UInt64? { deadline.withLock { $0 } }

        func tick(now: UInt64) {
            deadline.withLock { if let due = $0, now >= due { $0 = nil } }
            ticks.withLock { $0 += 1 }
            ticked.signal()
        }

        func loopFailed(_ error: SystemError) {}
    }

    static func join(_ member: Recorder, on loop: EventLoop) {
        let joined = DispatchSemaphore(value: 0)
        loop.perform {
            member.membership = loop.join(member)
            joined.signal()
        }
        _ = joined.wait(timeout: .now() + 10)
    }

    static func leave(_ member: Recorder, _ descriptors: [EventFD], on loop: EventLoop) {
        let left = DispatchSemaphore(value: 0)
        loop.perform {
            for descriptor in descriptors { member.membership?.remove(descriptor.descriptor) }
            member.membership?.leave()
            left.signal()
        }
        _ = left.wait(timeout: .now() + 10)
        for descriptor in descriptors { descriptor.close() }
    }

    @Test func aDescriptorsEventsReachTheMemberThatAddedItAlone() throws {
        let loop = try #require(EventLoop.shared)
        let (first, second) = (Recorder(), Recorder())
        Self.join(first, on: loop)
        Self.join(second, on: loop)
        let (one, two) = (try EventFD(), try EventFD())
        let added = DispatchSemaphore(value: 0)
        loop.perform {
            try? first.membership?.add(one.descriptor, events: .input)
            try? second.membership?.add(two.descriptor, events: .input)
            added.signal()
        }
        #expect(added.wait(timeout: .now() + 10) == .success)
        one.ring()
        #expect(first.heard.wait(timeout: .now() + 10) == .success)
        let drained = DispatchSemaphore(value: 0)
        loop.perform {
            one.drain()
            drained.signal()
        }
        #expect(drained.wait(timeout: .now() + 10) == .success)
        #expect(first.events.withLock { $0.allSatisfy { $0 == one.descriptor } })
        #expect(second.events.withLock { $0.isEmpty })
        two.ring()
        #expect(second.heard.wait(timeout: .now() + 10) == .success)
        #expect(second.events.withLock { $0.first } == two.descriptor)
        Self.leave(first, [one], on: loop)
        Self.leave(second, [two], on: loop)
    }

    @Test func aMembersDeadlineTicksItWithoutAnEvent() throws {
        let loop = try #require(EventLoop.shared)
        let member = Recorder()
        let started = ContinuousClock.now
        member.deadline.withLock { $0 = EngineClock.now() + 20_000_000 }
        Self.join(member, on: loop)
        // Other suites' work may tick it too (a doorbell rings every member); the tick that finds the deadline
        // come is the loop's own, with nothing else to wake it.
        var ticked = true
        while ticked, member.deadline.withLock({ $0 }) != nil {
            ticked = member.ticked.wait(timeout: .now() + 10) == .success
        }
        #expect(ticked, "the loop never ticked the member at its deadline")
        #expect(ContinuousClock.now - started >= .milliseconds(20))
        Self.leave(member, [], on: loop)
    }

    @Test func workHandedToTheLoopRunsThereInOrder() throws {
        let loop = try #require(EventLoop.shared)
        let order = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        for index in 0..<100 {
            loop.perform {
                order.withLock { $0.append(index) }
                if index == 99 { done.signal() }
            }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(order.withLock { $0 } == Array(0..<100))
    }
}

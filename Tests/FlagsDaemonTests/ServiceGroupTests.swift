import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// The service group: start in order, graceful shutdown in reverse order, cancellation last; a service that ends
/// while the others still serve ends the group with an error.
@Suite(.hangLimit) struct ServiceGroupTests {
    /// What the services did, in order.
    final class Journal: Sendable {
        private let entries = Locked<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    /// A service that records its start, its graceful shutdown and how its `run()` ended.
    final class Recorder: Service {
        let name: String
        let journal: Journal
        let returnsAfterGracefulShutdown: Bool
        private let stop = WakeSignal()

        init(_ name: String, _ journal: Journal, drains: Bool) {
            self.name = name
            self.journal = journal
            self.returnsAfterGracefulShutdown = drains
        }

        func run() async {
            journal.add("\(name) runs")
            await stop.wait()
            journal.add(Task.isCancelled ? "\(name) cancelled" : "\(name) drained")
        }

        func shutdownGracefully() async {
            journal.add("\(name) shuts down")
            if returnsAfterGracefulShutdown { stop.signal() }
        }
    }

    @Test("Shutdown asks each service in reverse order, waits for those that drain, and only then cancels")
    func shutdownInReverseThenCancel() async throws {
        let journal = Journal()
        let server = Recorder("server", journal, drains: true)
        let timers = Recorder("timers", journal, drains: false)
        let status = Recorder("status", journal, drains: false)
        try await ServiceGroup([server, timers, status]).run {
            while journal.all.filter({ $0.hasSuffix("runs") }).count < 3 { await Task.yield() }
            journal.add("trigger")
        }
        let after = Array(journal.all.drop { $0 != "trigger" })
        #expect(
            Array(after.prefix(5)) == [
                "trigger", "status shuts down", "timers shuts down", "server shuts down", "server drained",
            ])
        #expect(Set(after.dropFirst(5)) == ["timers cancelled", "status cancelled"])
    }

    /// A service whose `run()` ends by itself once every other service runs: returns, or throws `error`.
    final class Quitter: Service {
        let journal: Journal
        let others: Int
        let error: TestFailure?
        var name: String { "quitter" }

        init(_ journal: Journal, after others: Int, throwing error: TestFailure? = nil) {
            self.journal = journal
            self.others = others
            self.error = error
        }

        func run() async throws {
            while journal.all.filter({ $0.hasSuffix("runs") }).count < others { await Task.yield() }
            journal.add("quitter ends")
            if let error { throw error }
        }

        func shutdownGracefully() async {
            journal.add("quitter shuts down")
        }
    }

    struct TestFailure: Error, CustomStringConvertible {
        var description: String { "epoll_wait: Bad file descriptor" }
    }

    /// A trigger that never fires by itself, as the signal loop of a daemon nobody stops; it ends when cancelled.
    static func neverTriggered(_ journal: Journal) async {
        let never = WakeSignal()
        await never.wait()
        journal.add(Task.isCancelled ? "trigger cancelled" : "trigger fired")
    }

    /// The `ServiceGroupError` that `body` throws; nil, with an issue recorded, when it returns or throws another
    /// error. (`#expect(throws:)` returns the error it caught from Swift 6.1 on.)
    static func groupError(_ body: () async throws -> Void) async -> ServiceGroupError? {
        do {
            try await body()
            Issue.record("expected a ServiceGroupError, nothing was thrown")
        } catch let error as ServiceGroupError {
            return error
        } catch {
            Issue.record("expected a ServiceGroupError, caught \(error)")
        }
        return nil
    }

    @Test(
        "A service that returns while the others serve ends the group with an error naming it, the rest shut down",
        .timeLimit(.minutes(1)))
    func aServiceThatReturnsEarlyEndsTheGroup() async throws {
        let journal = Journal()
        let server = Recorder("server", journal, drains: true)
        let quitter = Quitter(journal, after: 2)
        let status = Recorder("status", journal, drains: false)
        let stops = Locked<[ServiceGroupError?]>([])
        let error = await Self.groupError {
            try await ServiceGroup([server, quitter, status]).run {
                await Self.neverTriggered(journal)
            } stopping: { failure in
                stops.withLock { $0.append(failure) }
                journal.add("stopping")
            }
        }
        let failure = try #require(error)
        #expect(failure.code == .serviceEndedUnexpectedly)
        #expect(failure.service == "quitter")
        #expect(failure.cause == nil)
        #expect(failure.description == "the service quitter ended before shutdown was asked for")
        // `stopping` is told once, with the failure; the service that ended is not asked to shut down again.
        #expect(stops.withLock { $0.map { $0?.service } } == ["quitter"])
        let after = Array(journal.all.drop { $0 != "quitter ends" })
        #expect(
            Array(after.prefix(5)) == [
                "quitter ends", "stopping", "status shuts down", "server shuts down", "server drained",
            ])
        #expect(Set(after.dropFirst(5)) == ["status cancelled", "trigger cancelled"])
    }

    @Test(
        "A service that throws while the others serve ends the group with its error as the cause",
        .timeLimit(.minutes(1)))
    func aServiceThatThrowsEndsTheGroup() async throws {
        let journal = Journal()
        let server = Recorder("server", journal, drains: true)
        let quitter = Quitter(journal, after: 1, throwing: TestFailure())
        let error = await Self.groupError {
            try await ServiceGroup([server, quitter]).run { await Self.neverTriggered(journal) }
        }
        let failure = try #require(error)
        #expect(failure.code == .serviceEndedUnexpectedly)
        #expect(failure.cause is TestFailure)
        #expect(failure.description == "the service quitter failed: epoll_wait: Bad file descriptor")
        #expect(journal.all.contains("server drained"))
        #expect(journal.all.contains("trigger cancelled"))
    }

    @Test("A service that returns after the trigger fired is a shutdown, not a failure", .timeLimit(.minutes(1)))
    func aServiceEndingAfterTheTriggerIsNoFailure() async throws {
        let journal = Journal()
        let server = Recorder("server", journal, drains: true)
        let stops = Locked<[ServiceGroupError?]>([])
        try await ServiceGroup([server]).run {
            while !journal.all.contains("server runs") { await Task.yield() }
        } stopping: { failure in
            stops.withLock { $0.append(failure) }
        }
        #expect(stops.withLock { $0.count } == 1)
        #expect(stops.withLock { $0.first ?? nil } == nil)
        #expect(journal.all.contains("server drained"))
    }
}

import Testing
import UnixIO

@testable import FlagsDaemon

/// The service group: start in order, graceful shutdown in reverse order, cancellation last.
@Suite struct ServiceGroupTests {
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
    func shutdownInReverseThenCancel() async {
        let journal = Journal()
        let server = Recorder("server", journal, drains: true)
        let timers = Recorder("timers", journal, drains: false)
        let status = Recorder("status", journal, drains: false)
        await ServiceGroup([server, timers, status]).run {
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
}

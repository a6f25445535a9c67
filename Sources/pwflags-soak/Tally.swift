import Foundation
import UnixIO

/// What every thread of the soak counts, and the errors it meets, behind one lock.
final class Tally: Sendable {
    /// The kinds of error the verdict tells apart.
    enum Failure: String, Sendable, CaseIterable {
        /// A `get`, `isEnabled` or `getAll` without its answer, or a wrong one.
        case request
        /// A file change that `getAll` did not show as exactly one new revision holding the file's flags.
        case change
        /// A subscriber whose connection or messages broke the protocol.
        case subscriber
        /// A revision skipped by an all-keys subscriber: a notification was lost.
        case lostNotification
        /// A subscriber's flags that differ from `getAll` at the same revision.
        case mismatch
    }

    /// The counters.
    struct Counts: Sendable {
        var requests = 0
        var changes = 0
        var notifications = 0
        var rawOpened = 0
        var rawClosed = 0
        var unlistened = 0
        var resubscribed = 0
        var libraryOpened = 0
        var libraryClosed = 0
        var failures: [Failure: Int] = [:]
        var messages: [String] = []

        /// Every failure, of any kind.
        var failureCount: Int { failures.values.reduce(0, +) }
    }

    private let counts = Locked(Counts())

    /// Changes the counters.
    func update(_ body: (inout Counts) -> Void) {
        counts.withLock { body(&$0) }
    }

    /// A copy of the counters.
    var current: Counts {
        counts.withLock { $0 }
    }

    /// Records a failure; the first ones are kept, with their message, for the report and printed at once.
    func fail(_ failure: Failure, _ message: String) {
        let isNew = counts.withLock { counts in
            counts.failures[failure, default: 0] += 1
            guard counts.messages.count < 50 else { return false }
            counts.messages.append("\(failure.rawValue): \(message)")
            return true
        }
        if isNew { FileHandle.standardError.write(Data("pwflags-soak: \(failure.rawValue): \(message)\n".utf8)) }
    }

    /// Opens a connection with `connect`, or counts `failure` ("`prefix`cannot connect: …") and returns nil.
    func connection<Connection>(
        _ failure: Failure, prefix: String = "", _ connect: () throws -> Connection
    ) -> Connection? {
        do {
            return try connect()
        } catch {
            fail(failure, "\(prefix)cannot connect: \(error)")
            return nil
        }
    }
}

import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Sends `sd_notify` messages to `$NOTIFY_SOCKET` without ever blocking the caller.
///
/// libsystemd's `sd_notify` sends with a blocking `sendmsg`: when the manager stops reading and the socket's
/// queue is full (`net.unix.max_dgram_qlen`), it blocks the thread that called it, which for pwflagsd is the
/// one that answers requests, reloads and stops. Here a message is sent at once with `MSG_DONTWAIT`; when the
/// queue is full it waits in a backlog that a worker delivers, in order, once the manager reads again. While
/// the backlog is not empty every new message joins it, so the manager always sees them in the order sent.
///
/// The backlog stays bounded without losing what the manager shows: a status line or a ping replaces the
/// waiting ones with the same fields (the manager keeps only the newest `STATUS=` anyway), and state changes
/// (READY, RELOADING, STOPPING) are always kept. When no thread can be started for the backlog, each new
/// message, whatever it is, tries again.
final class ManagerNotifier: Sendable {
    /// Starts `body` on a thread named `name`; false when no thread could be made (`DetachedThread.start`).
    typealias ThreadStarter = @Sendable (_ name: String, _ body: @escaping @Sendable () -> Void) -> Bool

    /// The socket address, as `sockaddr_un` bytes and their length; nil when `$NOTIFY_SOCKET` is unset or unusable.
    private let address: (bytes: [UInt8], length: socklen_t)?
    private let startThread: ThreadStarter
    /// Messages the manager has not taken yet, oldest first, and whether a thread is delivering them.
    private let backlog = Locked(Backlog())

    private struct Backlog {
        var messages: [Message] = []
        var draining = false

        /// Adds `message` at the end. A status line or ping first removes the waiting ones it supersedes (the
        /// same fields), and at the limit the oldest other one; the first is left alone: it may be on its way.
        mutating func enqueue(_ message: Message) {
            if !message.changesState, messages.count > 1 {
                messages =
                    [messages[0]]
                    + messages.dropFirst().filter { $0.changesState || $0.fields != message.fields }
                if messages.count >= ManagerNotifier.backlogLimit,
                    let oldest = messages.indices.dropFirst().first(where: { !messages[$0].changesState })
                {
                    messages.remove(at: oldest)
                }
            }
            messages.append(message)
        }
    }

    private struct Message {
        var bytes: [UInt8]
        /// READY=1, RELOADING=1, STOPPING=1: kept whatever the backlog holds; status lines and pings are not.
        var changesState: Bool
        /// The fields the message sets (`STATUS`, `WATCHDOG`, …): a newer message with the same ones supersedes it.
        var fields: [Substring]
    }

    /// Status lines and pings past this many waiting messages push out the oldest waiting one of them.
    static let backlogLimit = 64

    init(environment: [String: String], startThread: @escaping ThreadStarter = DetachedThread.start) {
        address = environment["NOTIFY_SOCKET"].flatMap(Self.socketAddress)
        self.startThread = startThread
    }

    /// Sends `state` now, or queues it behind messages the manager has not taken yet; never waits.
    func send(_ state: String) {
        guard address != nil else { return }
        let changesState = ["READY=1", "RELOADING=1", "STOPPING=1"].contains { state.contains($0) }
        let fields = state.split(separator: "\n").map { $0.prefix { $0 != "=" } }.sorted()
        let message = Message(bytes: Array(state.utf8), changesState: changesState, fields: fields)
        let startWorker = backlog.withLock { backlog -> Bool in
            if backlog.messages.isEmpty {
                switch deliver(message.bytes, blocking: false) {
                case .sent, .failed: return false
                case .full: break
                }
            }
            backlog.enqueue(message)
            defer { backlog.draining = true }
            return !backlog.draining
        }
        // A thread of its own while the backlog lasts, not a Dispatch queue: libdispatch's worker threads start
        // its workqueue monitor, which then wakes the daemon every second (docs/performance.md, Idle wakeups).
        if startWorker, !startThread("pwflagsd-notify", { self.drain() }) {
            // No thread to be had now: the next message, of any kind, tries again; the backlog waits for it.
            backlog.withLock { $0.draining = false }
        }
    }

    /// Delivers the backlog in order with blocking sends, on the worker, until it is empty.
    private func drain() {
        while let next = backlog.withLock({ $0.messages.first }) {
            _ = deliver(next.bytes, blocking: true)
            // Removed only after it went out, so that `send` keeps queueing behind it meanwhile.
            let empty = backlog.withLock { backlog in
                backlog.messages.removeFirst()
                backlog.draining = !backlog.messages.isEmpty
                return !backlog.draining
            }
            if empty { return }
        }
    }

    private enum Delivery {
        case sent
        /// The manager's queue is full.
        case full
        /// Anything else (no manager any more, a bad address): the message is lost, as with `sd_notify`.
        case failed
    }

    private func deliver(_ bytes: [UInt8], blocking: Bool) -> Delivery {
        guard let address else { return .failed }
        switch UnixSocket.sendDatagram(bytes, to: address.bytes, length: address.length, blocking: blocking) {
        case .sent: return .sent
        case .wouldBlock: return .full
        case .failed: return .failed
        }
    }

    /// `/path` or `@abstract` as a `sockaddr_un`; nil for anything else (such as a `vsock:` address).
    static func socketAddress(_ text: String) -> (bytes: [UInt8], length: socklen_t)? {
        UnixSocketAddress.rawAddress(text)
    }
}

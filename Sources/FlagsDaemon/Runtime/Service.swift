import UnixIO

/// A long-running part of the daemon, run by a `ServiceGroup`.
///
/// Graceful shutdown is kept apart from cancellation: `shutdownGracefully()` asks the service to stop taking new
/// work (and to cut what is not worth waiting for); a service whose `run()` then finishes its in-flight work,
/// flushes and returns says so with `returnsAfterGracefulShutdown`. Cancellation comes after, and ends the rest.
///
/// `run()` lasts as long as the daemon: returning or throwing before shutdown was asked for ends the daemon with
/// an error (`ServiceGroupError`).
protocol Service: Sendable {
    /// Runs the service; returns when it has shut down, or when cancelled.
    func run() async throws

    /// Asks for a graceful shutdown; returns once the service takes no new work.
    func shutdownGracefully() async

    /// True when `run()` returns by itself after `shutdownGracefully()`, once what was in flight is done;
    /// false for a service that runs until cancelled (a timer loop, a watcher).
    var returnsAfterGracefulShutdown: Bool { get }

    /// What the log calls the service when it ends unexpectedly.
    var name: String { get }
}

extension Service {
    /// Nothing to stop taking: the service ends when cancelled.
    func shutdownGracefully() async {}

    var returnsAfterGracefulShutdown: Bool { false }

    /// The type's name, such as `SocketServer`.
    var name: String { String(describing: Self.self) }
}

extension Service {
    /// Returns when the task is cancelled, without a timer: a service with nothing to watch waits here.
    static func waitForCancellation() async {
        let waiter = Locked<CheckedContinuation<Void, Never>?>(nil)
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = waiter.withLock { waiter -> Bool in
                    if Task.isCancelled { return true }
                    waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            waiter.withLock { $0.take() }?.resume()
        }
    }
}

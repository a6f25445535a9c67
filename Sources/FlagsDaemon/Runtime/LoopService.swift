import UnixIO

/// How the socket, bus and Varlink servers run: their loop on a thread of its own, and each call that may wait
/// carried out off that thread, in a task of its own, until the loop returns and its stream of calls ends.
///
/// The tasks are children of a discarding group, so each is freed the moment its call is answered. A plain task
/// group keeps every child's result until someone takes it: the servers kept each answered call's task (about
/// 5 KB) for the daemon's life.
enum LoopService {
    /// Runs `loop` on a thread named `thread` and `perform`s each item of `work`; `stop` asks the loop to end
    /// when the calling task is cancelled. Returns once the loop returned and every item was performed.
    static func run<Work: Sendable>(
        thread: String, loop: @escaping @Sendable () -> Void, work: AsyncStream<Work>,
        perform: @escaping @Sendable (Work) async -> Void, stop: @escaping @Sendable () -> Void
    ) async {
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        DetachedThread.start(name: thread) {
                            loop()
                            done.resume()
                        }
                    }
                }
                for await item in work {
                    group.addTask { await perform(item) }
                }
            }
        } onCancel: {
            stop()
        }
    }
}

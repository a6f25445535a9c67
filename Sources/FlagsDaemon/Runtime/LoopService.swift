/// How the line socket, Varlink and the bus serve as services: their part of the event loop, and each call that
/// may wait carried out off the loop, in a task of its own, until the part has finished and its stream of calls
/// ends.
///
/// The tasks are children of a discarding group, so each is freed the moment its call is answered. A plain task
/// group keeps every child's result until someone takes it: the servers kept each answered call's task (about
/// 5 KB) for the daemon's life.
enum LoopService {
    /// Starts the part with `start`, which calls back once it has finished, and `perform`s each item of `work`;
    /// `stop` asks the part to finish when the calling task is cancelled. Returns once the part finished and
    /// every item was performed.
    static func run<Work: Sendable>(
        start: @escaping @Sendable (_ finished: @escaping @Sendable () -> Void) -> Void, work: AsyncStream<Work>,
        perform: @escaping @Sendable (Work) async -> Void, stop: @escaping @Sendable () -> Void
    ) async {
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        start { done.resume() }
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

/// How the line socket, Varlink and the bus serve as services: their part of the event loop, and each call that
/// may wait carried out off the loop, in a task of its own, until the part has finished and its stream of calls
/// ends.
///
/// The tasks are children of a discarding group, so each is freed the moment its call is answered. A plain task
/// group keeps every child's result until someone takes it: the servers kept each answered call's task (about
/// 5 KB) for the daemon's life.
struct LoopService<Work: Sendable>: Sendable {
    private let work: AsyncStream<Work>
    /// Where the part hands the calls that may wait.
    let sink: AsyncStream<Work>.Continuation

    init() {
        // Each connection has at most one call in flight, so the stream is bounded by the part's connections.
        (work, sink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Hands a call to be carried out off the loop.
    func submit(_ item: Work) {
        sink.yield(item)
    }

    /// Starts the part with `start`, which calls back once it has finished (the stream of calls then ends), and
    /// `perform`s each call submitted; `stop` asks the part to finish when the calling task is cancelled.
    /// Returns once the part finished and every call was performed.
    func run(
        start: @escaping @Sendable (_ finished: @escaping @Sendable () -> Void) -> Void,
        perform: @escaping @Sendable (Work) async -> Void, stop: @escaping @Sendable () -> Void
    ) async {
        let (work, sink) = (self.work, self.sink)
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        start {
                            sink.finish()
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

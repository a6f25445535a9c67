import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Delivers POSIX signals as an async sequence instead of running code inside a signal handler.
enum SignalWatcher {
    /// Stops the default action of `signals` and yields each one as it arrives, until the stream is dropped.
    static func signals(_ signals: [Int32]) -> AsyncStream<Int32> {
        AsyncStream(bufferingPolicy: .bufferingNewest(8)) { continuation in
            let queue = DispatchQueue(label: "pwflagsd.signals")
            let sources = signals.map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { continuation.yield(number) }
                source.resume()
                return source
            }
            let box = SourceBox(sources)
            continuation.onTermination = { _ in box.cancel() }
        }
    }
}

/// Keeps the dispatch sources alive for the stream's lifetime.
// @unchecked: dispatch sources may be cancelled from any thread.
private final class SourceBox: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ sources: [any DispatchSourceSignal]) {
        self.sources = sources
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}

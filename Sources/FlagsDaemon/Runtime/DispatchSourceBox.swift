import Dispatch

/// Keeps a dispatch read source alive for the lifetime of the stream it feeds, and cancels it when the stream
/// ends (the signal pipe's and the wall-clock timer's streams).
// @unchecked: a dispatch source may be cancelled from any thread.
final class DispatchSourceBox: @unchecked Sendable {
    private let source: any DispatchSourceRead

    init(_ source: any DispatchSourceRead) {
        self.source = source
    }

    func cancel() {
        source.cancel()
    }
}

import Dispatch
import FeatureFlags
import FlagsCore
import UnixIO

/// A listener that counts its calls, notes the queue each ran on, and lets a test await the next call.
final class RecordingListener: FeatureFlagsUpdateListener {
    static var queueKey: DispatchSpecificKey<String> { key.key }

    /// The key, held in a box: `DispatchSpecificKey` is `Sendable` in the Dispatch of newer toolchains only, and
    /// a static constant must be.
    private struct Key: @unchecked Sendable {
        let key = DispatchSpecificKey<String>()
    }
    private static let key = Key()

    let calls = Locked<[String?]>([])
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let onCall: @Sendable () -> Void

    init(onCall: @escaping @Sendable () -> Void = {}) {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .unbounded)
        self.onCall = onCall
    }

    var callCount: Int { calls.withLock { $0.count } }

    func featureFlagsDidUpdate() {
        calls.withLock { $0.append(DispatchQueue.getSpecific(key: Self.queueKey)) }
        onCall()
        continuation.yield()
    }

    /// Waits for the next call; false after `timeout`.
    func nextCall(timeout: Duration = .seconds(15)) async -> Bool {
        let stream = self.stream
        return await withDeadline(timeout) {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next() != nil ? true : nil
        } ?? false
    }
}

/// Waits for `operation` at most `timeout`: its result, or nil when the time ran out first (the operation is
/// then cancelled).
///
/// For waits on something another task or thread provides (a snapshot, a request, a listener call), where
/// giving up is an answer and not an error.
public func withDeadline<Value: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async -> Value?
) async -> Value? {
    await withTaskGroup(of: Value?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

import FoundationEssentials
import UnixIO

/// Keeps the `STATUS=` line of `systemctl status` current: sent again when something it shows may have changed,
/// never on a timer.
///
/// The line changes only at an event: the flags (the store tells every change), a fetch or its failure (the
/// refresher's status), the local file's problem, the wall clock (its watcher calls `update()`), a reload
/// (which sends the line with `READY=1`). Those without an observer of their own ring `StatusChange.signal`.
final class SystemdStatus: Service {
    /// The signal the rooms below ring (`StatusChange`).
    static var changed: WakeSignal { StatusChange.signal }

    private let store: FlagStore
    private let stack: @Sendable () -> ProviderStack
    private let lastSent = Locked("")

    init(store: FlagStore, stack: @escaping @Sendable () -> ProviderStack) {
        self.store = store
        self.stack = stack
        _ = store.observe { _ in Self.changed.signal() }
    }

    /// The line as it stands.
    func line() -> String {
        let line = stack().statusLine(store: store)
        // A QA device must not forget what it forced: `systemctl status` says so as long as it lasts.
        let overridden = store.overrideCount
        return overridden == 0 ? line : line + "; \(overridden) overridden on this device"
    }

    /// Sends the line when it changed.
    func update() {
        let line = line()
        let changed = lastSent.withLock { last in
            defer { last = line }
            return last != line
        }
        if changed { Systemd.notifyStatus(line) }
    }

    /// Sends the line whenever it may have changed, until cancelled.
    func run() async {
        while !Task.isCancelled {
            // Cleared before the line is read: a change made while it is read rings again for the next wait.
            Self.changed.clear()
            update()
            await Self.changed.wait()
        }
    }
}

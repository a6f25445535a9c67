import FoundationEssentials
import UnixIO

/// Keeps the `STATUS=` line of `systemctl status` current, looking every few seconds and sending it when it changed.
final class SystemdStatus: Service {
    private let store: FlagStore
    private let stack: @Sendable () -> ProviderStack
    private let lastSent = Locked("")

    init(store: FlagStore, stack: @escaping @Sendable () -> ProviderStack) {
        self.store = store
        self.stack = stack
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

    /// Updates every few seconds until cancelled; changes of flags or errors show within that time.
    func run() async {
        while !Task.isCancelled {
            update()
            try? await Task.sleep(for: .seconds(5))
        }
    }
}

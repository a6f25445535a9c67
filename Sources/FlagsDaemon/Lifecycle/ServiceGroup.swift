/// Runs the daemon's services in one task group: starts them in order, and at shutdown asks each for a graceful
/// shutdown in reverse order, waiting for those that finish their in-flight work, and only then cancels the rest.
///
/// A service that depends on another comes after it: it stops first, while what it depends on still runs.
struct ServiceGroup: Sendable {
    private let services: [any Service]

    init(_ services: [any Service]) {
        self.services = services
    }

    /// Runs every service until `trigger` returns, then shuts them down; returns once all have ended.
    ///
    /// An error thrown by a service's `run()` ends that service only: the daemon keeps serving with the rest, as
    /// it would without it.
    func run(until trigger: () async -> Void) async {
        let ended = services.map { _ in WakeSignal() }
        await withTaskGroup(of: Void.self) { group in
            for (service, ended) in zip(services, ended) {
                group.addTask {
                    try? await service.run()
                    ended.signal()
                }
            }
            await trigger()
            for (service, ended) in zip(services, ended).reversed() {
                await service.shutdownGracefully()
                if service.returnsAfterGracefulShutdown { await ended.wait() }
            }
            group.cancelAll()
        }
    }
}

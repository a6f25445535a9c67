/// Runs the daemon's services in one task group: starts them in order, and at shutdown asks each for a graceful
/// shutdown in reverse order, waiting for those that finish their in-flight work, and only then cancels the rest.
///
/// A service that depends on another comes after it: it stops first, while what it depends on still runs.
///
/// Every service runs for the daemon's whole life. One whose `run()` returns or throws before shutdown began has
/// stopped doing its job (the socket server's loop failed, say), and a daemon that lives on without it only
/// looks healthy: the group then shuts the others down as it would at SIGTERM and ends with a
/// `ServiceGroupError` naming that service.
struct ServiceGroup: Sendable {
    private let services: [any Service]

    init(_ services: [any Service]) {
        self.services = services
    }

    /// How a child of the group ended.
    private enum Ending: Sendable {
        /// The trigger returned: shutdown was asked for.
        case triggered
        /// The service at `index` returned (`cause` nil) or threw.
        case service(index: Int, cause: (any Error)?)
    }

    /// Runs every service until `trigger` returns or a service ends, then shuts them down; returns once all
    /// have ended.
    ///
    /// `stopping` is called once, when shutdown begins, with the failure that began it (nil when the trigger
    /// did). A service that ends unexpectedly cancels the trigger.
    ///
    /// - Throws: `ServiceGroupError` when a service ended before the trigger returned. An error a service throws
    ///   after shutdown began ends that service only.
    func run(
        until trigger: @escaping @Sendable () async -> Void,
        stopping: (ServiceGroupError?) -> Void = { _ in }
    ) async throws(ServiceGroupError) {
        let services = self.services
        let ended = services.map { _ in WakeSignal() }
        let failure = await withTaskGroup(of: Ending.self) { group -> ServiceGroupError? in
            for (index, service) in services.enumerated() {
                let ended = ended[index]
                group.addTask {
                    defer { ended.signal() }
                    do {
                        try await service.run()
                        return .service(index: index, cause: nil)
                    } catch {
                        return .service(index: index, cause: error)
                    }
                }
            }
            group.addTask {
                await trigger()
                return .triggered
            }
            var failure: ServiceGroupError?
            var gone: Int?
            if case .service(let index, let cause) = await group.next() {
                failure = .serviceEnded(services[index].name, cause: cause)
                gone = index
            }
            stopping(failure)
            for index in services.indices.reversed() where index != gone {
                await services[index].shutdownGracefully()
                if services[index].returnsAfterGracefulShutdown { await ended[index].wait() }
            }
            group.cancelAll()
            return failure
        }
        if let failure { throw failure }
    }
}

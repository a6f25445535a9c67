import FlagsCore
import UnixIO

extension Daemon {
    /// The bus service of `[DBus] Bus=`; nil when it is `no`, or when the daemon cannot make its thread's
    /// doorbell (then it logs why and serves the socket alone). Reaching the bus itself happens later, on the
    /// bus thread: a bus that is missing now is waited for, never a reason not to start.
    func makeBusServer(
        configuration: Configuration, store: FlagStore, controller: FlagService, socketPath: String?,
        statusLine: @escaping @Sendable () -> String, logger: Logger
    ) -> BusServer? {
        guard let bus = configuration.bus else { return nil }
        let access = BusAccess(socketPath: socketPath, policy: controller.policy)
        do {
            return try BusServer(
                kind: bus, name: configuration.busName, store: store,
                controller: controller, access: access, callCapacity: configuration.maxConnections,
                statusLine: statusLine, logger: logger)
        } catch {
            logger.error("the bus is off: \(error)")
            return nil
        }
    }
}

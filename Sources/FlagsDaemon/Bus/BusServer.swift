import FlagsCore
import UnixIO

/// The daemon on a message bus (docs/dbus.md) as a service: its part of the event loop (`BusLoop`) and the
/// task group that carries out its control calls. It never holds up the socket: the daemon is ready before the
/// bus is reached, and serves the socket while the bus is missing or restarts.
final class BusServer: Service {
    let loop: BusLoop
    private let calls = LoopService<BusWork>()

    init(
        kind: MessageBus, name: String, store: FlagStore, controller: FlagService, access: BusAccess,
        callCapacity: Int, statusLine: @escaping @Sendable () -> String, logger: Logger
    ) throws(SystemError) {
        loop = try BusLoop(
            kind: kind, name: name, store: store, status: controller.busStatus, callCapacity: callCapacity,
            logger: logger, work: calls.sink
        ) { snapshot, dispatch in
            BusObject(
                snapshot: snapshot, controller: controller, access: access, statusLine: statusLine,
                dispatch: dispatch)
        }
    }

    /// Serves until shut down or cancelled.
    func run() async {
        let loop = self.loop
        await calls.run(
            start: { loop.start(finished: $0) },
            perform: { item in loop.post(.reply(item.id, await item.operation())) },
            stop: { loop.post(.stop) })
    }

    func shutdownGracefully() async {
        loop.post(.stop)
    }

    var returnsAfterGracefulShutdown: Bool { true }
}

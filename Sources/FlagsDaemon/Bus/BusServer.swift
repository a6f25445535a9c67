import FlagsCore
import UnixIO

/// The daemon on a message bus (docs/dbus.md) as a service: the bus thread (`BusLoop`) and the task group
/// that carries out its control calls. It never holds up the socket: the daemon is ready before the bus is
/// reached, and serves the socket while the bus is missing or restarts.
final class BusServer: Service {
    let loop: BusLoop
    private let access: BusAccess
    private let work: AsyncStream<BusWork>

    init(
        kind: MessageBus, name: String, store: FlagStore, controller: DaemonController, access: BusAccess,
        callCapacity: Int, statusLine: @escaping @Sendable () -> String, logger: Logger
    ) throws(SystemError) {
        let (work, continuation) = AsyncStream.makeStream(of: BusWork.self)
        self.work = work
        self.access = access
        loop = try BusLoop(
            kind: kind, name: name, store: store, status: controller.busStatus, callCapacity: callCapacity,
            logger: logger, work: continuation
        ) { dispatch in
            BusObject(
                store: store, controller: controller, access: access, statusLine: statusLine, dispatch: dispatch)
        }
    }

    /// Serves until shut down or cancelled.
    func run() async {
        let loop = self.loop
        let work = self.work
        await LoopService.run(
            thread: "pwflagsd-bus", loop: { loop.run() }, work: work,
            perform: { item in loop.post(.reply(item.id, await item.operation())) },
            stop: { loop.post(.stop) })
    }

    /// A reload changed `ControlGroups`.
    func update(access: AccessPolicy) {
        self.access.policy.withLock { $0 = access }
    }

    func shutdownGracefully() async {
        loop.post(.stop)
    }

    var returnsAfterGracefulShutdown: Bool { true }
}

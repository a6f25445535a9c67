import CSystemd
import CSystemdBus
import FlagsCore
import FlagsProtocol
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The bus's part of the event loop: keeps a connection to the bus (reconnecting when it is missing or
/// restarts), serves the daemon's object on it, and sends every flag change as a signal. sd-bus is not
/// thread-safe, so every bus call happens on the loop's thread; other threads post to `inbox` and ring the
/// loop's doorbell.
///
/// The loop waits on sd-bus's descriptor for the events sd-bus asks for (`sd_bus_get_events`) and until its
/// deadline (`sd_bus_get_timeout`, a call it waits on), as hostnamed's sd-event loop does; and until the next
/// reconnection or large answer is due. Nothing wakes it on a timer of its own.
final class BusLoop: LoopMember, @unchecked Sendable {
    enum Post: Sendable {
        /// The reply to the pending call `id`.
        case reply(UInt64, BusReply)
        case stop
    }

    let kind: MessageBus
    let name: String
    /// Where the daemon stands on the bus, for `status` (the controller's board).
    private let status: Locked<StatusResult.Bus?>
    private let inbox = Locked<[Post]>([])
    private let loop: EventLoop
    /// The changes of the flags, as every listener receives them (`ChangeFeed`): each becomes a `Changed` signal.
    private let feed: ChangeFeed
    private let logger: Logger
    /// Control calls, carried out by `BusServer.run()`'s task group.
    private let work: AsyncStream<BusWork>.Continuation

    /// Each user's share of the control calls in flight off this thread: as many as a user may hold connections
    /// on the line socket, where a connection has one call in flight at most (`ConnectionShare`).
    private let callCapacity: Int

    // Loop thread only.
    private var membership: EventLoop.Membership?
    private var finished: (@Sendable () -> Void)?
    /// The bus connection's descriptor as the loop waits on it, and the events it waits for.
    private var watched: (descriptor: Int32, events: Epoll.Events)?
    private var connection: BusConnection?
    private var object: BusObject!
    /// Who sent the calls, and the calls of new senders while the bus is asked.
    private let peers = BusPeers()
    /// The calls with large answers, answered one at a time between the others.
    private var largeAnswers: LargeAnswers<(call: BusMessage, peer: BusPeer)>
    private var callShare = ConnectionShare()
    private var retryDelay: UInt64 = BusLoop.firstRetry
    private var retryAt: UInt64?
    /// Why the last attempt to connect failed, once logged: a bus that stays out of reach is logged once, and again
    /// only when the reason changes or after it served.
    private var loggedFailure: String?
    private var running = true
    /// The control calls being carried out off the loop, by id: a call's message never leaves the loop's thread
    /// (sd-bus counts its references without atomics), only its id and its reply travel.
    private var pending: [UInt64: (call: BusMessage, uid: UInt32)] = [:]
    private var lastCall: UInt64 = 0

    /// Messages processed in one tick at most.
    private static let processRounds = 64
    private static let firstRetry: UInt64 = 1_000_000_000
    private static let lastRetry: UInt64 = 60_000_000_000
    /// How long the bus has to say who sent a call before the call is refused.
    private static let askTimeout: UInt64 = 5_000_000_000

    init(
        kind: MessageBus, name: String, store: FlagStore, status: Locked<StatusResult.Bus?>, callCapacity: Int,
        logger: Logger, work: AsyncStream<BusWork>.Continuation, loop: EventLoop? = EventLoop.shared,
        makeObject: (FlagSnapshot, @escaping BusObject.Dispatch) -> BusObject
    ) throws(SystemError) {
        guard let loop else { throw SystemError("epoll_create1", errno: EMFILE) }
        self.loop = loop
        self.kind = kind
        self.callCapacity = callCapacity
        largeAnswers = LargeAnswers(perUser: ConnectionShare.perUser(of: callCapacity))
        self.name = name
        self.status = status
        self.logger = logger
        status.withLock { $0 = StatusResult.Bus(bus: kind.rawValue, name: name, state: "connecting") }
        self.work = work
        feed = ChangeFeed(store: store, doorbell: loop.doorbell)
        object = makeObject(feed.initial) { [unowned self, work] call, peer, operation in
            guard self.callShare.admits(peer.uid, capacity: self.callCapacity) else { return false }
            self.callShare.opened(peer.uid)
            self.lastCall += 1
            self.pending[self.lastCall] = (call, peer.uid)
            work.yield(BusWork(id: self.lastCall, operation: operation))
            return true
        }
    }

    deinit {
        feed.close()
    }

    /// From any thread: hands `post` to the loop's thread.
    func post(_ post: Post) {
        inbox.withLock { $0.append(post) }
        loop.doorbell.ring()
    }

    /// Joins the loop and serves until `.stop`; then calls `finished` on the loop's thread.
    func start(finished: @escaping @Sendable () -> Void) {
        loop.perform { [self] in
            self.finished = finished
            guard let membership = loop.join(self) else {
                return loopFailed(loop.failure ?? SystemError("epoll_wait", errno: EBADF))
            }
            self.membership = membership
            connect()
            pump()
        }
    }

    func handle(_ events: Epoll.Events, on descriptor: Int32) {
        // The loop ticks the member after the round: `pump` lets sd-bus read and write.
    }

    func woke() {
        takePosts()
    }

    /// When the loop must tick the bus: sd-bus's deadline, the next reconnection, trim or large answer.
    func nextDeadline() -> UInt64? {
        var deadline = retryAt ?? .max
        if let connection {
            if let due = largeAnswerDue(on: connection) { deadline = min(deadline, due) }
            if let busDeadline = connection.deadline { deadline = min(deadline, busDeadline &* 1000) }
        }
        return deadline == .max ? nil : deadline
    }

    func tick(now: UInt64) {
        pump()
    }

    func loopFailed(_ error: SystemError) {
        logger.error("the event loop failed; the bus is off", ["ERRNO": String(error.errno)])
        finish()
    }

    /// Lets sd-bus do what arrived or is due, answers the next large call, reconnects when due, and waits for
    /// the events sd-bus asks for; at `.stop`, finishes.
    private func pump() {
        guard membership != nil else { return }
        if connection == nil, let retryAt, MonotonicClock.nanoseconds() >= retryAt { connect() }
        if let connection {
            do {
                // A bounded round, so that a flood on the bus cannot hold the loop from the other surfaces:
                // sd-bus's timeout is 0 while messages it read wait, so the loop comes back at once.
                var rounds = 0
                while rounds < Self.processRounds, try connection.process() { rounds += 1 }
                answerOneLargeCall(on: connection)
            } catch {
                lose(because: "\(error)")
            }
        }
        guard running else { return finish() }
        watch()
    }

    /// Waits on the connection's descriptor for what sd-bus asks for now (none while there is no connection).
    private func watch() {
        let wanted = connection.map {
            (descriptor: $0.descriptor, events: Epoll.Events(rawValue: UInt32(UInt16(bitPattern: $0.events))))
        }
        if let watched, watched.descriptor != wanted?.descriptor {
            membership?.remove(watched.descriptor)
            self.watched = nil
        }
        guard let wanted, wanted.descriptor >= 0 else { return }
        do {
            if let watched {
                guard watched.events != wanted.events else { return }
                try membership?.modify(wanted.descriptor, events: wanted.events)
            } else {
                try membership?.add(wanted.descriptor, events: wanted.events)
            }
            watched = wanted
        } catch {
            lose(because: "\(error)")
        }
    }

    /// Stops waiting on the connection's descriptor: before the connection closes it.
    private func unwatch() {
        if let watched { membership?.remove(watched.descriptor) }
        watched = nil
    }

    private func finish() {
        connection?.flush(within: 1_000_000_000)
        unwatch()
        connection = nil
        feed.close()
        work.finish()
        membership?.leave()
        membership = nil
        let finished = self.finished
        self.finished = nil
        finished?()
    }

    private func connect() {
        retryAt = nil
        do {
            let connection = try BusConnection(kind: kind, description: "pwflagsd")
            try connection.addObject(
                path: BusObject.path, interface: BusObject.interface,
                userdata: Unmanaged.passUnretained(self).toOpaque(), method: busMethod, property: busProperty)
            try connection.requestName(
                name, userdata: Unmanaged.passUnretained(self).toOpaque(), answered: busNameAnswered)
            self.connection = connection
            report("connecting")
        } catch {
            let reason = "\(error)"
            if reason != loggedFailure {
                loggedFailure = reason
                logger.warning(
                    "cannot connect to the \(kind.rawValue) bus; the socket serves meanwhile, and the daemon tries again",
                    ["REASON": reason])
            }
            schedule(because: reason)
        }
    }

    private func lose(because reason: String) {
        unwatch()
        connection = nil
        pending.removeAll()
        largeAnswers.removeAll()
        callShare = ConnectionShare()
        peers.forgetAll()
        logger.warning("lost the \(kind.rawValue) bus; reconnecting", ["REASON": reason])
        schedule(because: reason)
    }

    private func report(_ state: String, reason: String? = nil) {
        status.withLock { $0 = StatusResult.Bus(bus: kind.rawValue, name: name, state: state, reason: reason) }
    }

    private func schedule(because reason: String) {
        report("unavailable", reason: reason)
        retryAt = MonotonicClock.nanoseconds() + retryDelay
        retryDelay = min(retryDelay * 2, Self.lastRetry)
    }

    private func takePosts() {
        let posts = inbox.withLock { posts in
            defer { posts = [] }
            return posts
        }
        // A change while the bus is away is not kept: a client that comes back reads GetAll again.
        for change in feed.take() {
            if change.update.snapshot.revision > object.snapshot.revision { object.snapshot = change.update.snapshot }
            guard let connection else { continue }
            if let signal = object.changedSignal(change.update, on: connection) { connection.send(signal) }
            connection.emitPropertiesChanged(
                path: BusObject.path, interface: BusObject.interface,
                names: ["Revision", "Source", "ExpiresAt", "Status"])
        }
        for post in posts {
            switch post {
            case .reply(let id, let reply):
                // A reply to a call made on a connection that has since been lost goes nowhere.
                guard let (call, uid) = pending.removeValue(forKey: id) else { continue }
                callShare.closed(uid)
                guard let connection, let message = reply.message(answering: call) else { continue }
                connection.send(message)
            case .stop:
                running = false
            }
        }
    }

    /// A method call from sd-bus (on this thread, inside `process`): answered now when its sender is known,
    /// else held while the bus is asked who sent it.
    fileprivate func handle(_ raw: OpaquePointer) -> Int32 {
        guard let connection else { return 0 }
        let call = BusMessage(retaining: raw)
        guard let sender = call.sender else {
            answer(call, from: nil)
            return 1
        }
        switch peers.admit(call, from: sender) {
        case .known(let peer):
            answer(call, from: peer)
        case .held, .gone:
            break
        case .refused:
            let text = "too many calls wait for the bus to say who sent them; try again"
            if let reply = call.errorReply(name: BusObject.limitsExceeded, text: text) { connection.send(reply) }
        case .ask:
            let userdata = Unmanaged.passUnretained(self).toOpaque()
            if let serial = connection.askUser(
                of: sender, timeout: Self.askTimeout, userdata: userdata, answered: busUserAnswered)
            {
                peers.asking(about: sender, serial: serial)
            } else {
                for call in peers.release(sender) { answer(call, from: nil) }
            }
        }
        return 1
    }

    /// Answers `call` of `peer`'s now, hands it off when it is a control call, or queues it behind the other
    /// large answers (`LargeAnswers`).
    private func answer(_ call: BusMessage, from peer: BusPeer?) {
        guard let connection else { return }
        if let peer, case let size = object.answerSize(of: call, from: peer), size >= largeAnswerBytes {
            guard !largeAnswers.queue((call, peer), size: size, from: peer.uid) else { return }
            let text = "too many calls with large answers wait: wait for the answers to those made"
            if let reply = call.errorReply(name: BusObject.limitsExceeded, text: text) { connection.send(reply) }
            return
        }
        if let reply = object.handle(call, from: peer) { connection.send(reply) }
    }

    /// When the next large answer may be written: nil when none waits or the last has not left for the bus yet
    /// (the connection's readiness to write wakes the loop then).
    private func largeAnswerDue(on connection: BusConnection) -> UInt64? {
        largeAnswers.isEmpty || connection.hasQueuedWrites ? nil : largeAnswers.readyAt
    }

    /// Writes the next large answer, when one may be written now.
    private func answerOneLargeCall(on connection: BusConnection) {
        guard largeAnswerDue(on: connection) != nil,
            let (call, peer) = largeAnswers.next(now: MonotonicClock.nanoseconds())
        else { return }
        if let reply = object.handle(call, from: peer) { connection.send(reply) }
    }

    /// The bus's answer to `askUser`: the calls held for that sender are answered, or dropped when the sender
    /// hung up meanwhile.
    fileprivate func userAnswered(_ reply: BusMessage) {
        let error = reply.errorName
        if error == "org.freedesktop.DBus.Error.NameHasNoOwner" {
            peers.hungUp(serial: reply.replyCookie)
            return
        }
        let uid = error == nil ? reply.readUInt32() : nil
        let now = MonotonicClock.seconds()
        guard let (peer, calls) = peers.answered(serial: reply.replyCookie, uid: uid, now: now) else { return }
        for call in calls { answer(call, from: peer) }
    }

    /// The bus's answer to the request for the name.
    fileprivate func nameAnswered(_ reply: BusMessage) {
        if let error = reply.errorName {
            report("unavailable", reason: "the bus refused the name: \(error)")
            logger.error(
                "cannot own \(name) on the \(kind.rawValue) bus: \(error); is the bus policy installed "
                    + "(/usr/share/dbus-1/system.d/\(BusObject.interface).conf)?",
                ["BUS_NAME": name])
        } else {
            retryDelay = Self.firstRetry
            loggedFailure = nil
            report("serving")
            logger.notice("serving on the \(kind.rawValue) bus", ["BUS_NAME": name])
        }
    }

    /// A property read from sd-bus.
    fileprivate func read(_ property: String, into reply: OpaquePointer) -> Int32 {
        object.read(property: property, into: BusMessage(retaining: reply)) ? 1 : -ENOENT
    }
}

/// A control call's work, carried out off the loop; its reply goes back through the loop's inbox.
struct BusWork: Sendable {
    /// The call's id in the loop's table of pending calls.
    let id: UInt64
    let operation: @Sendable () async -> BusReply
}

private let busMethod: pwflagsd_bus_method = { call, userdata, _ in
    guard let call, let userdata else { return -EINVAL }
    return Unmanaged<BusLoop>.fromOpaque(userdata).takeUnretainedValue().handle(call)
}

private let busUserAnswered: sd_bus_message_handler_t = { reply, userdata, _ in
    guard let reply, let userdata else { return 0 }
    Unmanaged<BusLoop>.fromOpaque(userdata).takeUnretainedValue().userAnswered(BusMessage(retaining: reply))
    return 1
}

private let busNameAnswered: sd_bus_message_handler_t = { reply, userdata, _ in
    guard let reply, let userdata else { return 0 }
    Unmanaged<BusLoop>.fromOpaque(userdata).takeUnretainedValue().nameAnswered(BusMessage(retaining: reply))
    return 1
}

private let busProperty: pwflagsd_bus_property = { property, reply, userdata, _ in
    guard let property, let reply, let userdata else { return -EINVAL }
    return Unmanaged<BusLoop>.fromOpaque(userdata).takeUnretainedValue().read(String(cString: property), into: reply)
}

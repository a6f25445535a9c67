import FlagsCore
import FlagsProtocol
import Synchronization
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The socket server's event loop: one thread, epoll, non-blocking sockets; the inbox, the watchdog heartbeat
/// and the drain at shutdown.
///
/// Everything a request touches on the hot path (connections, subscriptions, the loop's snapshot) is owned by
/// this thread, so `get` takes no lock. Other threads talk to the loop only through `post(_:)`: a locked inbox
/// and an eventfd that wakes `epoll_wait`. The jobs around it have their own types, owned by this thread too:
/// `AcceptGate` (who may connect), `Connection` (input framing and output), `RequestRouter` (what a line asks),
/// `SubscriptionTable` (`listen` and fan-out).
final class ServerLoop: @unchecked Sendable {
    /// Messages to the loop from other threads.
    enum Mail: Sendable {
        case update(FlagUpdate)
        case completion(connection: UInt64, requestID: RequestID?, result: Result<any CallResult, RPCError>)
        case limits(ServerLimits)
        case access(AccessPolicy)
        case shutdown
    }

    /// A callback run on the loop thread every `interval` (the systemd watchdog), so that a hung loop stops it.
    struct Heartbeat: Sendable {
        let interval: Duration
        let action: @Sendable () -> Void
    }

    private enum Phase {
        case running
        case draining(deadline: UInt64)
    }

    // Shared with other threads.
    private let inbox = Mutex<[Mail]>([])
    private let wake: EventFD

    // Loop thread only.
    private let epoll: Epoll
    private let gate: AcceptGate
    private let router: RequestRouter
    private let subscriptions = SubscriptionTable()
    private var limits: ServerLimits
    private let logger: Logger
    private let heartbeat: Heartbeat?
    private var snapshot: FlagSnapshot
    private var connections: [Int32: Connection] = [:]
    private var nextConnectionID: UInt64 = 1
    private var phase = Phase.running
    private var readBuffer = [UInt8](repeating: 0, count: 65536)
    private let events = Epoll.Buffer(capacity: 256)
    /// A second buffer for `reapHangups`, which waits while the loop still reads `events`.
    private let hangups = Epoll.Buffer(capacity: 64)

    /// The drain allowed at shutdown for in-flight requests and unsent output.
    static let drainTimeout: UInt64 = 2_000_000_000

    init(
        listenFD: Int32,
        store: FlagStore,
        controller: DaemonController,
        limits: ServerLimits,
        access: AccessPolicy,
        logger: Logger,
        heartbeat: Heartbeat?,
        submit: @escaping @Sendable (RequestRouter.Work) -> Void
    ) throws(SystemError) {
        self.limits = limits
        self.logger = logger
        self.heartbeat = heartbeat
        let epoll = try Epoll()
        let wake: EventFD
        do {
            wake = try EventFD()
        } catch {
            epoll.close()
            throw error
        }
        self.epoll = epoll
        self.wake = wake
        self.gate = AcceptGate(listenFD: listenFD, epoll: epoll, logger: logger)
        self.router = RequestRouter(
            access: access, controller: controller, subscriptions: subscriptions, logger: logger, submit: submit)
        self.snapshot = FlagSnapshot.initial
        try epoll.add(wake.descriptor, events: .input)
        try epoll.add(listenFD, events: .input)
        // Observe before reading the snapshot so that no update falls between the two.
        self.snapshot = store.observe { [weak self] update in self?.post(.update(update)) }
    }

    deinit {
        wake.close()
        epoll.close()
    }

    /// Hands a message to the loop from any thread.
    func post(_ message: Mail) {
        inbox.withLock { $0.append(message) }
        wake.ring()
    }

    // MARK: The loop

    /// Runs until shutdown has drained every connection; closes the listening socket and every connection.
    func run() {
        var nextBeat = heartbeat.map { Self.now() + Self.nanoseconds($0.interval) }
        heartbeat?.action()
        while true {
            if case .draining(let deadline) = phase, connections.isEmpty || Self.now() >= deadline { break }
            var timeout: Int32 = -1
            if let beat = nextBeat { timeout = Self.milliseconds(until: beat) }
            if case .draining(let deadline) = phase {
                timeout = min(timeout < 0 ? Int32.max : timeout, Self.milliseconds(until: deadline))
            }
            if let paused = gate.pausedUntil {
                timeout = min(timeout < 0 ? Int32.max : timeout, Self.milliseconds(until: paused))
            }
            let count: Int
            do {
                count = try epoll.wait(into: events, timeout: timeout)
            } catch {
                logger.error("epoll_wait failed; the server stops", ["ERRNO": String(error.errno)])
                break
            }
            // Hangups before new connections: a slot its peer gave up is free for the client behind it.
            var listenReady = false
            for index in 0..<count {
                let event = events[index]
                let fd = event.descriptor
                if fd == wake.descriptor {
                    drainInbox()
                } else if fd == gate.listenFD {
                    listenReady = true
                } else if let connection = connections[fd] {
                    handle(event.events, on: connection)
                }
            }
            if listenReady { acceptConnections() }
            if let paused = gate.pausedUntil, Self.now() >= paused { gate.resume() }
            if let beat = nextBeat, let heartbeat, Self.now() >= beat {
                heartbeat.action()
                nextBeat = Self.now() + Self.nanoseconds(heartbeat.interval)
            }
        }
        for connection in connections.values { closeConnection(connection) }
        gate.stop()
    }

    private func drainInbox() {
        wake.drain()
        let messages = inbox.withLock { inbox in
            defer { inbox.removeAll(keepingCapacity: true) }
            return inbox
        }
        for message in messages {
            switch message {
            case .update(let update): apply(update)
            case .completion(let id, let requestID, let result):
                complete(connectionID: id, requestID: requestID, result: result)
            case .limits(let newLimits): limits = newLimits
            case .access(let newAccess): router.access = newAccess
            case .shutdown: beginDraining()
            }
        }
    }

    private func beginDraining() {
        guard case .running = phase else { return }
        phase = .draining(deadline: Self.now() + Self.drainTimeout)
        gate.stop()
        // Lines already received are answered; nothing new is read.
        for connection in Array(connections.values) {
            processLines(connection)
            settle(connection)
        }
    }

    // MARK: Connections

    private func acceptConnections() {
        gate.acceptWaiting(maxConnections: limits.maxConnections) {
            if connections.count >= limits.maxConnections { reapHangups() }
            guard connections.count < limits.maxConnections, case .running = phase else { return false }
            return true
        } open: { fd, peer in
            let connection = Connection(id: nextConnectionID, fd: fd, peer: peer, maxLineBytes: limits.maxLineBytes)
            nextConnectionID += 1
            connections[fd] = connection
            updateInterest(connection)
        }
    }

    /// At the limit, handles the connections whose peers left since the last wait, without waiting: a peer that
    /// closed its end right before another connected must not keep its slot from that one.
    private func reapHangups() {
        let count = (try? epoll.wait(into: hangups, timeout: 0)) ?? 0
        for index in 0..<count {
            let event = hangups[index]
            guard !event.events.isDisjoint(with: [.readHangup, .hangup, .error]),
                let connection = connections[event.descriptor]
            else { continue }
            handle(event.events, on: connection)
        }
    }

    private func handle(_ events: Epoll.Events, on connection: Connection) {
        if events.contains(.output) {
            // settle, not only flush: once the output is out, EPOLLOUT must leave the interest (or the loop spins
            // on a writable socket) and a connection waiting to close must close.
            settle(connection)
            guard connections[connection.fd] === connection else { return }
        }
        if !events.isDisjoint(with: [.input, .readHangup, .hangup, .error]) {
            readFrom(connection)
        }
    }

    private func readFrom(_ connection: Connection) {
        let count: Int
        do {
            let result = readBuffer.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in try Descriptor.readAvailable(connection.fd, into: buffer) }
            }
            guard let read = try result.get() else { return }
            count = read
        } catch {
            closeConnection(connection)
            return
        }
        if count == 0 {
            // End of input: `echo … | socat` shuts down its writing side and still reads its answers, so the
            // complete lines are answered and flushed before the close; a half-received line dies here.
            connection.inputClosed = true
            processLines(connection)
            settle(connection)
            return
        }
        readBuffer.withUnsafeBytes { raw in
            connection.framer.append(UnsafeRawBufferPointer(rebasing: raw[0..<count]))
        }
        processLines(connection)
        settle(connection)
    }

    /// Answers complete lines until one has to wait or the input runs out.
    private func processLines(_ connection: Connection) {
        while !connection.busy, !connection.closeAfterFlush {
            guard limits.takesRequests(pending: connection.pendingBytes) else {
                connection.heldBack = true
                return
            }
            switch connection.framer.next() {
            case .needMore:
                return
            case .tooLong:
                Message.writeError(
                    id: .unreadable, error: .lineTooLong(limit: limits.maxLineBytes), to: &connection.output)
                connection.closeAfterFlush = true
                logger.warning(
                    "closed a connection that sent a line over MaxLineBytes", ["PEER_PID": String(connection.peer.pid)])
            case .line(let line):
                router.route(
                    line, on: connection, snapshot: snapshot, limits: limits, openConnections: connections.count)
            }
        }
    }

    /// Writes what it can, adjusts the epoll interest, and closes the connection when it is done.
    private func settle(_ connection: Connection) {
        guard connections[connection.fd] === connection else { return }
        flush(connection)
        guard connections[connection.fd] === connection else { return }
        if connection.heldBack, limits.takesRequests(pending: connection.pendingBytes) {
            // The client has read enough: the requests it sent meanwhile are answered now.
            connection.heldBack = false
            processLines(connection)
            flush(connection)
            guard connections[connection.fd] === connection else { return }
        }
        if connection.pendingBytes == 0,
            connection.closeAfterFlush || ((isDraining || connection.inputClosed) && !connection.busy)
        {
            closeConnection(connection)
            return
        }
        updateInterest(connection)
    }

    private var isDraining: Bool {
        if case .draining = phase { return true }
        return false
    }

    private func flush(_ connection: Connection) {
        guard connection.sendPending() else {
            closeConnection(connection)
            return
        }
        let overrun = limits.isOverrun(
            pending: connection.pendingBytes, flagSetBytes: snapshot.encodedList.count,
            firstMessage: connection.unsentOfFirstMessage)
        guard overrun else { return }
        logger.warning(
            "closed a connection whose client does not read its output",
            ["PEER_PID": String(connection.peer.pid), "PENDING_BYTES": String(connection.pendingBytes)]
        )
        closeConnection(connection)
    }

    private func updateInterest(_ connection: Connection) {
        // After the end of input, EPOLLRDHUP would be reported again and again: only a full hangup matters then.
        var events: Epoll.Events = connection.inputClosed ? .hangup : .readHangup
        if !connection.busy, !connection.heldBack, !connection.closeAfterFlush, !connection.inputClosed, !isDraining {
            events.insert(.input)
        }
        if connection.pendingBytes > 0 { events.insert(.output) }
        guard events != connection.interest else { return }
        do {
            if connection.interest.isEmpty {
                try epoll.add(connection.fd, events: events)
            } else {
                try epoll.modify(connection.fd, events: events)
            }
            connection.interest = events
        } catch {
            closeConnection(connection)
        }
    }

    private func closeConnection(_ connection: Connection) {
        guard connections[connection.fd] === connection else { return }
        connections[connection.fd] = nil
        subscriptions.remove(connection)
        epoll.remove(connection.fd)
        close(connection.fd)
        // A descriptor is free again: a connection waiting in the backlog may now be accepted.
        gate.resume()
    }

    // MARK: Answers from the async side, changes of the flag set

    private func complete(connectionID: UInt64, requestID: RequestID?, result: Result<any CallResult, RPCError>) {
        guard let connection = connections.values.first(where: { $0.id == connectionID }) else { return }
        connection.busy = false
        if let requestID {
            switch result {
            case .success(let value): Message.writeResult(id: requestID, result: value, to: &connection.output)
            case .failure(let error): Message.writeError(id: requestID, error: error, to: &connection.output)
            }
        }
        processLines(connection)
        settle(connection)
    }

    /// Takes a newer snapshot and tells the subscriptions what changed (R9).
    private func apply(_ update: FlagUpdate) {
        guard update.snapshot.revision > snapshot.revision else { return }
        snapshot = update.snapshot
        subscriptions.fanOut(update, to: Array(connections.values), expiresAt: router.expiresAt) { settle($0) }
    }

    // MARK: Time

    static func now() -> UInt64 { MonotonicClock.nanoseconds() }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    private static func milliseconds(until deadline: UInt64) -> Int32 {
        let now = now()
        guard deadline > now else { return 0 }
        return Int32(min(UInt64(Int32.max), (deadline - now + 999_999) / 1_000_000))
    }
}


import FlagsCore
import FlagsProtocol
import Synchronization
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The socket server's event loop: one thread, epoll, non-blocking sockets.
///
/// Everything a request touches on the hot path (connections, subscriptions, the loop's snapshot) is owned by
/// this thread, so `get` takes no lock. Other threads talk to the loop only through `post(_:)`: a locked inbox
/// and an eventfd that wakes `epoll_wait`.
final class ServerLoop: @unchecked Sendable {
    /// Messages to the loop from other threads.
    enum Mail: Sendable {
        case update(FlagUpdate)
        case completion(connection: UInt64, requestID: RequestID?, result: Result<any CallResult, RPCError>)
        case limits(ServerLimits)
        case access(AccessPolicy)
        case shutdown
    }

    /// A request the loop hands to the async side because it may wait.
    struct Work: Sendable {
        let connection: UInt64
        /// The id as the request sent it, owning its bytes.
        let requestID: RequestID?
        let call: Call
        let peer: PeerCredentials
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
    private var listenFD: Int32
    private var limits: ServerLimits
    private var access: AccessPolicy
    private let handler: any RequestHandler
    private let logger: Logger
    private let submit: @Sendable (Work) -> Void
    private let heartbeat: Heartbeat?
    private var snapshot: FlagSnapshot
    private var connections: [Int32: Connection] = [:]
    private var nextConnectionID: UInt64 = 1
    private var nextSubscriptionID = 1
    private var subscriptionCount = 0
    private var phase = Phase.running
    private var readBuffer = [UInt8](repeating: 0, count: 65536)
    private let events = Epoll.Buffer(capacity: 256)
    /// A second buffer for `reapHangups`, which waits while the loop still reads `events`.
    private let hangups = Epoll.Buffer(capacity: 64)
    private var refusedConnections = LogThrottle()
    private var refusedCalls = LogThrottle()
    /// Set while the daemon is out of descriptors: the listening socket is left out of epoll until then.
    private var acceptPausedUntil: UInt64?
    private var lastDescriptorLog: UInt64 = 0

    /// The drain allowed at shutdown for in-flight requests and unsent output.
    static let drainTimeout: UInt64 = 2_000_000_000

    init(
        listenFD: Int32,
        store: FlagStore,
        handler: any RequestHandler,
        limits: ServerLimits,
        access: AccessPolicy,
        logger: Logger,
        heartbeat: Heartbeat?,
        submit: @escaping @Sendable (Work) -> Void
    ) throws(SystemError) {
        self.listenFD = listenFD
        self.handler = handler
        self.limits = limits
        self.access = access
        self.logger = logger
        self.heartbeat = heartbeat
        self.submit = submit
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
            if let paused = acceptPausedUntil {
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
                } else if fd == listenFD {
                    listenReady = true
                } else if let connection = connections[fd] {
                    handle(event.events, on: connection)
                }
            }
            if listenReady, listenFD >= 0 { acceptConnections() }
            if let paused = acceptPausedUntil, Self.now() >= paused { resumeAccepting() }
            if let beat = nextBeat, let heartbeat, Self.now() >= beat {
                heartbeat.action()
                nextBeat = Self.now() + Self.nanoseconds(heartbeat.interval)
            }
        }
        for connection in connections.values { closeConnection(connection) }
        if listenFD >= 0 {
            close(listenFD)
            listenFD = -1
        }
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
            case .access(let newAccess): access = newAccess
            case .shutdown: beginDraining()
            }
        }
    }

    private func beginDraining() {
        guard case .running = phase else { return }
        phase = .draining(deadline: Self.now() + Self.drainTimeout)
        epoll.remove(listenFD)
        close(listenFD)
        listenFD = -1
        // Lines already received are answered; nothing new is read.
        for connection in Array(connections.values) {
            processLines(connection)
            settle(connection)
        }
    }

    // MARK: Connections

    private func acceptConnections() {
        while true {
            let fd: Int32
            do {
                guard let accepted = try UnixSocket.accept(listenFD) else { return }
                fd = accepted
            } catch {
                switch error.errno {
                case ECONNABORTED: continue
                case EMFILE, ENFILE:
                    pauseAccepting()
                    return
                default:
                    logger.warning("accept failed", ["ERRNO": String(error.errno)])
                    return
                }
            }
            if connections.count >= limits.maxConnections { reapHangups() }
            guard connections.count < limits.maxConnections, case .running = phase else {
                close(fd)
                noteRefusedConnection()
                continue
            }
            // accept4 is hidden behind _GNU_SOURCE; two fcntl calls per connection cost nothing that matters.
            _ = try? Descriptor.setCloseOnExec(fd)
            guard (try? UnixSocket.setNonBlocking(fd)) != nil, let peer = try? UnixSocket.peerCredentials(fd) else {
                close(fd)
                continue
            }
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

    /// Out of descriptors: the listening socket stays readable, so epoll would wake the loop again at once (a
    /// busy loop and a log line each time). It leaves epoll until a connection closes or 100 ms pass; the
    /// waiting connections stay in the backlog. Logged at most once a second.
    private func pauseAccepting() {
        let now = Self.now()
        if acceptPausedUntil == nil, listenFD >= 0 {
            try? epoll.modify(listenFD, events: [])
        }
        acceptPausedUntil = now + 100_000_000
        guard now - lastDescriptorLog >= 1_000_000_000 else { return }
        lastDescriptorLog = now
        logger.error("out of file descriptors; new connections wait in the backlog")
    }

    private func resumeAccepting() {
        guard acceptPausedUntil != nil else { return }
        acceptPausedUntil = nil
        guard listenFD >= 0 else { return }
        try? epoll.modify(listenFD, events: .input)
    }

    /// Logs refusals past `MaxConnections` at most once a second, so a flood cannot flood the journal too.
    private func noteRefusedConnection() {
        guard let count = refusedConnections.record(now: Self.now()) else { return }
        logger.warning(
            "refused connections past MaxConnections",
            ["CONNECTIONS_REFUSED": String(count), "MAX_CONNECTIONS": String(limits.maxConnections)]
        )
    }

    /// Logs refused control calls (-32001) at most once a second, as refused connections are.
    private func noteRefusedCall(_ call: Call, on connection: Connection) {
        guard let count = refusedCalls.record(now: Self.now()) else { return }
        logger.notice(
            "refused a control method",
            ["METHOD": call.method, "PEER_UID": String(connection.peer.uid), "CALLS_REFUSED": String(count)]
        )
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
                handleLine(line, on: connection)
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
        subscriptionCount -= connection.subscriptions.count
        epoll.remove(connection.fd)
        close(connection.fd)
        // A descriptor is free again: a connection waiting in the backlog may now be accepted.
        resumeAccepting()
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

extension ServerLoop {
    // MARK: Requests

    private func handleLine(_ line: ArraySlice<UInt8>, on connection: Connection) {
        if let fast = FastRequest.scan(line) {
            answer(fast, on: connection)
            return
        }
        let request: Request
        switch Request.decode(line) {
        case .failure(let failure):
            if let id = RequestID(echoing: failure.id, in: line) {
                Message.writeError(id: id, error: failure.error, to: &connection.output)
            }
            return
        case .success(let decoded):
            request = decoded
        }
        // The id's text as sent, not the parsed number printed back (9007199254740993 is not a Double).
        let requestID = RequestID(echoing: request.id, in: line)
        let call: Call
        do {
            call = try Call(method: request.method, params: request.params)
        } catch {
            if let id = requestID { Message.writeError(id: id, error: error, to: &connection.output) }
            return
        }
        if let refusal = permissionError(for: call, on: connection) {
            noteRefusedCall(call, on: connection)
            if let id = requestID { Message.writeError(id: id, error: refusal, to: &connection.output) }
            return
        }
        switch call {
        case .get(let key):
            guard let id = requestID else { return }
            GetResult.writeLine(id: id.text, encodedFlag: snapshot.encoded[FlagKey(key)], to: &connection.output)
        case .isEnabled(let key, let fallback):
            guard let id = requestID else { return }
            let result = IsEnabledResult(flag: snapshot.flags[key], default: fallback)
            IsEnabledResult.writeLine(id: id.text, enabled: result.enabled, found: result.found, to: &connection.output)
        case .getAll:
            guard let id = requestID else { return }
            writeListing(id: id, subscription: nil, on: connection)
        case .listen(let keys):
            subscribe(connection, keys: keys, requestID: requestID)
        case .unlisten(let subscription):
            guard let index = connection.subscriptions.firstIndex(where: { $0.id == subscription }) else {
                if let id = requestID {
                    Message.writeError(id: id, error: .unknownSubscription, to: &connection.output)
                }
                return
            }
            connection.listenKeyUnits -= ListenKeyCost.units(of: connection.subscriptions.remove(at: index).keys)
            subscriptionCount -= 1
            if let id = requestID { Message.writeResult(id: id, result: EmptyResult(), to: &connection.output) }
        case .status:
            guard let id = requestID else { return }
            var status = handler.status()
            status.flags = snapshot.flags.count
            status.revision = snapshot.revision
            status.connections = connections.count
            status.subscriptions = subscriptionCount
            Message.writeResult(id: id, result: status, to: &connection.output)
        case .refresh, .logImpression, .setUserId, .setAppState, .pushRegistered, .reload:
            connection.busy = true
            submit(Work(connection: connection.id, requestID: requestID?.detached, call: call, peer: connection.peer))
        }
    }

    /// Answers a request the fast scanner recognised, from the snapshot's encoded flags.
    private func answer(_ request: FastRequest, on connection: Connection) {
        switch request {
        case .get(let id, let key):
            GetResult.writeLine(id: id, encodedFlag: snapshot.encoded[FlagKey(key)], to: &connection.output)
        case .isEnabled(let id, let key, let fallback):
            let flag = snapshot.flags[key]
            IsEnabledResult.writeLine(
                id: id, enabled: flag?.isEnabled ?? fallback, found: flag != nil, to: &connection.output)
        case .getAll(let id):
            writeListing(id: RequestID(text: id), subscription: nil, on: connection)
        }
    }

    private func permissionError(for call: Call, on connection: Connection) -> RPCError? {
        if case .reload = call {
            return access.isPrivileged(connection.peer) ? nil : .notPermitted(call.method)
        }
        guard call.isControl else { return nil }
        let allowed = access.mayControl(connection.peer) { connection.supplementaryGroups }
        return allowed ? nil : .notPermitted(call.method)
    }

    private func subscribe(_ connection: Connection, keys: [String]?, requestID: RequestID?) {
        guard connection.subscriptions.count < limits.maxSubscriptions else {
            if let requestID {
                Message.writeError(
                    id: requestID, error: .tooManySubscriptions(limit: limits.maxSubscriptions), to: &connection.output)
            }
            return
        }
        let wanted = keys.map { Set($0.map { FlagKey($0) }) }
        let units = ListenKeyCost.units(of: wanted)
        guard connection.listenKeyUnits + units <= limits.maxListenKeys else {
            if let requestID {
                let error = RPCError.tooManyListenKeys(
                    limit: limits.maxListenKeys, held: connection.listenKeyUnits, requested: units)
                Message.writeError(id: requestID, error: error, to: &connection.output)
            }
            return
        }
        let subscription = "s\(nextSubscriptionID)"
        nextSubscriptionID += 1
        connection.subscriptions.append((subscription, wanted))
        connection.listenKeyUnits += units
        subscriptionCount += 1
        guard let requestID else { return }
        writeListing(id: requestID, subscription: (subscription, handler.expiresAt()), keys: wanted, on: connection)
    }

    /// The `FlagListing` of `getAll` and `listen`, from the snapshot's encodings. Every flag: the snapshot's
    /// shared encoding, queued by reference. Chosen keys: their flags' encodings, sorted by key.
    private func writeListing(
        id: RequestID, subscription: (id: String, expiresAt: JSONValue)?, keys: Set<FlagKey>? = nil,
        on connection: Connection
    ) {
        Message.writeResultPrefix(id: id, to: &connection.output)
        FlagListing.writeHead(
            revision: snapshot.revision, listen: subscription.map { ($0.id, $0.expiresAt) }, to: &connection.output)
        if let keys {
            connection.output.append(UInt8(ascii: "["))
            var first = true
            for key in keys.sorted() {
                guard let encoded = snapshot.encoded[key] else { continue }
                if !first { connection.output.append(UInt8(ascii: ",")) }
                first = false
                connection.output.append(contentsOf: encoded)
            }
            connection.output.append(UInt8(ascii: "]"))
        } else if snapshot.encodedList.count < 4096 {
            connection.output.append(
                contentsOf: UnsafeRawBufferPointer(start: snapshot.encodedList.base, count: snapshot.encodedList.count))
        } else {
            connection.append(shared: snapshot.encodedList)
        }
        FlagListing.writeTail(fromNetwork: nil, to: &connection.output)
        connection.output.append(contentsOf: Message.resultSuffix)
    }

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

    /// Tells every subscription whose keys the update touches (R9), in one pass over the connections.
    ///
    /// The part of the notification after the subscription id is encoded once for all subscribers of every key
    /// and shared by reference; subscriptions to chosen keys get their own.
    private func apply(_ update: FlagUpdate) {
        guard update.snapshot.revision > snapshot.revision else { return }
        snapshot = update.snapshot
        guard subscriptionCount > 0 else { return }
        let encoded = update.snapshot.encoded
        let revision = update.snapshot.revision
        let expiresAt = handler.expiresAt()
        func tail(for diff: FlagDiff) -> ByteChunk {
            ByteChunk(
                FlagsChanged.tail(
                    revision: revision,
                    changed: diff.changed.map { encoded[FlagKey($0.key)] ?? $0.wireBytes },
                    removed: diff.removed,
                    expiresAt: expiresAt
                )
            )
        }
        var everyKey: ByteChunk?
        for connection in Array(connections.values) where !connection.subscriptions.isEmpty {
            for subscription in connection.subscriptions {
                let chunk: ByteChunk
                if let keys = subscription.keys {
                    let diff = update.diff.restricted(to: keys)
                    guard !diff.isEmpty else { continue }
                    chunk = tail(for: diff)
                } else {
                    chunk = everyKey ?? tail(for: update.diff)
                    everyKey = chunk
                }
                FlagsChanged.writePrefix(subscription: subscription.id, to: &connection.output)
                if chunk.count < 512 {
                    connection.output.append(contentsOf: UnsafeRawBufferPointer(start: chunk.base, count: chunk.count))
                } else {
                    connection.append(shared: chunk)
                }
            }
            settle(connection)
        }
    }
}

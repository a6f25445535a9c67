import FlagsProtocol
import UnixIO

/// A framed protocol on an event engine (the line socket, Varlink): what differs between them is here as
/// requirements; the steps of a connection they share (opening it, reading and answering its messages, the
/// `MaxPendingBytes` rules on its output, its epoll interest, the idle sweep, the drain) are this protocol's
/// extension, written once.
///
/// Every method runs on the event loop's thread.
protocol FramedHandler: ConnectionHandler where Connection: FramedConnection {
    /// The limits, the log, the flag set the answers read and the idle sweep's next time.
    var framed: FramedState { get set }

    /// What the log calls the protocol, before its lines ("" for the line socket, "Varlink: ").
    static var logPrefix: String { get }
    /// The byte that ends a message the daemon sends.
    static var terminator: UInt8 { get }

    /// A client of an admitted socket whose peer is `peer`.
    func makeConnection(id: UInt64, fd: Int32, peer: PeerCredentials) -> Connection
    /// True while the connection streams (a Varlink `Listen`) and reads no further message; never, by default.
    func streams(_ connection: Connection) -> Bool
    /// The streaming connection sent a message: end the stream, whose last reply says so, before it is read.
    /// Called only while `streams` is true, so a protocol that never streams leaves it out.
    func endStream(_ connection: Connection)
    /// True while the connection holds its slot without sending anything (it listens for changes).
    func listens(_ connection: Connection) -> Bool
    /// Answers a complete message, now or through the async side.
    func route(_ message: ArraySlice<UInt8>, on connection: Connection)
    /// A message over `MaxLineBytes`: queue the error the protocol answers with, and say so in the log.
    func refuseTooLong(_ connection: Connection)
    /// `connection` has sent all it had queued (the line socket's propagation waits for it); nothing, by default.
    func sentEverything(_ connection: Connection)
    /// `connection` is about to close: forget the protocol's state that refers to it.
    func forget(_ connection: Connection)
}

extension FramedHandler {
    /// The drain allowed at shutdown for calls in flight and unsent output.
    static var drainTimeout: UInt64 { 2_000_000_000 }

    var maxConnections: Int { framed.limits.maxConnections }

    /// A protocol whose connections never stream: every message is read in turn.
    func streams(_ connection: Connection) -> Bool { false }

    func endStream(_ connection: Connection) {}

    /// A protocol where nothing waits for a connection's output to be written.
    func sentEverything(_ connection: Connection) {}

    func open(_ fd: Int32, id: UInt64) -> Connection? {
        guard let peer = try? UnixSocket.peerCredentials(fd) else { return nil }
        return makeConnection(id: id, fd: fd, peer: peer)
    }

    /// At the limit, the connections whose peers left since the last wait give up their slots first.
    func makeRoom() {
        engine.reapHangups()
    }

    func refuse(_ fd: Int32, logCount: Int?) {
        guard let logCount else { return }
        framed.logger.warning(
            Self.logPrefix + "refused connections past MaxConnections",
            ["CONNECTIONS_REFUSED": String(logCount), "MAX_CONNECTIONS": String(framed.limits.maxConnections)])
    }

    func handle(_ events: Epoll.Events, on connection: Connection) {
        if events.contains(.output) {
            // settle, not only flush: once the output is out, EPOLLOUT must leave the interest (or the loop spins
            // on a writable socket) and a connection waiting to close must close.
            settle(connection)
            guard engine.isOpen(connection) else { return }
        }
        if !events.isDisjoint(with: [.input, .readHangup, .hangup, .error]) {
            readFrom(connection)
        }
    }

    func readFrom(_ connection: Connection) {
        connection.activeSinceSweep = true
        switch connection.receive(through: &engine.readBuffer) {
        case .nothing:
            return
        case .failed:
            engine.close(connection)
            return
        case .end:
            // End of input: `echo … | socat` shuts down its writing side and still reads its answers, so the
            // complete messages are answered and flushed before the close; a half-received one dies here.
            connection.inputClosed = true
        case .bytes:
            // Replies are never interleaved: a message on a streaming connection ends the stream, then is read.
            if streams(connection) { endStream(connection) }
        }
        processMessages(connection)
        settle(connection)
    }

    /// Answers complete messages until one has to wait, the input runs out, or the connection streams.
    func processMessages(_ connection: Connection) {
        while !connection.busy, !connection.closeAfterFlush, !streams(connection) {
            guard framed.limits.takesRequests(pending: connection.pendingBytes) else {
                connection.heldBack = true
                return
            }
            switch connection.framer.next() {
            case .needMore:
                return
            case .tooLong:
                refuseTooLong(connection)
                connection.closeAfterFlush = true
            case .message(let message):
                route(message, on: connection)
            }
        }
    }

    /// Writes what it can, adjusts the epoll interest, and closes the connection when it is done.
    func settle(_ connection: Connection) {
        guard engine.isOpen(connection) else { return }
        flush(connection)
        guard engine.isOpen(connection) else { return }
        if connection.heldBack, framed.limits.takesRequests(pending: connection.pendingBytes) {
            // The client has read enough: the messages it sent meanwhile are answered now.
            connection.heldBack = false
            processMessages(connection)
            flush(connection)
            guard engine.isOpen(connection) else { return }
        }
        if connection.pendingBytes == 0,
            connection.closeAfterFlush || ((engine.isDraining || connection.inputClosed) && !connection.busy)
        {
            engine.close(connection)
            return
        }
        engine.setInterest(connection, connection.wantedEvents(draining: engine.isDraining))
    }

    /// Sends, then cuts a client whose unsent output is past `ServerLimits.isOverrun`'s bound.
    func flush(_ connection: Connection) {
        let queued = connection.pendingBytes
        guard engine.send(connection) else { return }
        if queued >= MemoryReturn.threshold { engine.loop.memoryReturn.released(queued - connection.pendingBytes) }
        if connection.pendingBytes == 0 { sentEverything(connection) }
        let overrun = framed.limits.isOverrun(
            pending: connection.pendingBytes, flagSetBytes: framed.snapshot.encodedList.count,
            firstMessage: { connection.output.unsentOfFirstMessage(endingWith: Self.terminator) })
        guard overrun else { return }
        framed.logger.warning(
            Self.logPrefix + "closed a connection whose client does not read its output",
            ["PEER_PID": String(connection.peer.pid), "PENDING_BYTES": String(connection.pendingBytes)])
        engine.close(connection)
    }

    func closing(_ connection: Connection) {
        engine.loop.memoryReturn.released(connection.pendingBytes)
        engine.loop.memoryReturn.closed(leaving: engine.loop.openConnections)
        forget(connection)
    }

    func drainStarted() {
        // Messages already received are answered; nothing new is read.
        for connection in Array(engine.connections.values) {
            processMessages(connection)
            settle(connection)
        }
    }

    func nextDeadline() -> UInt64? { framed.nextIdleSweep }

    func tick(now: UInt64) {
        sweepIdleIfDue(now: now)
    }

    /// Every `IdleConnectionTimeout`, closes the connections idle since the previous sweep (so a connection goes
    /// between once and twice the timeout after its last byte) and starts counting again. Without it, idle
    /// connections kept for ever filled `MaxConnections`. No clock read of its own (the loop's `now`), and nothing
    /// on the request path but a flag set on each read.
    func sweepIdleIfDue(now: UInt64) {
        guard now >= framed.nextIdleSweep else { return }
        framed.nextIdleSweep = now + framed.limits.idleTimeout
        let closed = engine.closeIdleConnections { listens($0) }
        if closed > 0 {
            framed.logger.debug(
                Self.logPrefix + "closed idle connections (IdleConnectionTimeout)", ["CONNECTIONS": String(closed)])
        }
    }
}

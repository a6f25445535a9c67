import FlagsProtocol
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The line protocol's steps for one connection: opening it, reading and answering its lines, the
/// `MaxPendingBytes` rules on its output, its epoll interest, and what its closing releases.
extension LineHandler {
    func open(_ fd: Int32) -> Connection? {
        guard let peer = try? UnixSocket.peerCredentials(fd) else { return nil }
        let connection = Connection(id: nextConnectionID, fd: fd, peer: peer, maxLineBytes: limits.maxLineBytes)
        nextConnectionID += 1
        return connection
    }

    /// At the limit, the connections whose peers left since the last wait give up their slots first.
    func makeRoom() {
        engine.reapHangups()
    }

    func refuse(_ fd: Int32, logCount: Int?) {
        guard let logCount else { return }
        logger.warning(
            "refused connections past MaxConnections",
            ["CONNECTIONS_REFUSED": String(logCount), "MAX_CONNECTIONS": String(limits.maxConnections)]
        )
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
            // complete lines are answered and flushed before the close; a half-received line dies here.
            connection.inputClosed = true
        case .bytes:
            break
        }
        processLines(connection)
        settle(connection)
    }

    /// Answers complete lines until one has to wait or the input runs out.
    func processLines(_ connection: Connection) {
        while !connection.busy, !connection.closeAfterFlush {
            guard limits.takesRequests(pending: connection.pendingBytes) else {
                connection.heldBack = true
                return
            }
            switch connection.framer.next() {
            case .needMore:
                return
            case .tooLong:
                metrics.error(.lineTooLong(limit: limits.maxLineBytes))
                Message.writeError(
                    id: .unreadable, error: .lineTooLong(limit: limits.maxLineBytes), to: &connection.output.bytes)
                connection.closeAfterFlush = true
                logger.warning(
                    "closed a connection that sent a line over MaxLineBytes", ["PEER_PID": String(connection.peer.pid)])
            case .message(let line):
                router.route(
                    line, on: connection, snapshot: snapshot, limits: limits,
                    openConnections: engine.connections.count)
            }
        }
    }

    /// Writes what it can, adjusts the epoll interest, and closes the connection when it is done.
    func settle(_ connection: Connection) {
        guard engine.isOpen(connection) else { return }
        flush(connection)
        guard engine.isOpen(connection) else { return }
        if connection.heldBack, limits.takesRequests(pending: connection.pendingBytes) {
            // The client has read enough: the requests it sent meanwhile are answered now.
            connection.heldBack = false
            processLines(connection)
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
        if !propagation.isIdle, connection.pendingBytes == 0 {
            propagation.written(connection.id, now: EngineClock.now())
        }
        let overrun = limits.isOverrun(
            pending: connection.pendingBytes, flagSetBytes: snapshot.encodedList.count,
            firstMessage: { connection.output.unsentOfFirstLine() })
        guard overrun else { return }
        logger.warning(
            "closed a connection whose client does not read its output",
            ["PEER_PID": String(connection.peer.pid), "PENDING_BYTES": String(connection.pendingBytes)]
        )
        engine.close(connection)
    }

    func closing(_ connection: Connection) {
        engine.loop.memoryReturn.released(connection.pendingBytes)
        engine.loop.memoryReturn.closed(leaving: engine.loop.openConnections)
        subscriptions.remove(connection)
        if !propagation.isIdle { propagation.written(connection.id, now: EngineClock.now()) }
    }
}

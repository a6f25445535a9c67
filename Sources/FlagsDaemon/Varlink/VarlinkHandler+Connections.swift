import FlagsProtocol
import UnixIO

/// Varlink's steps for one connection: opening it, reading and answering its calls, the `MaxPendingBytes`
/// rules on its output, its epoll interest, the idle sweep, and what its closing releases.
extension VarlinkHandler {
    func open(_ fd: Int32) -> VarlinkConnection? {
        guard let peer = try? UnixSocket.peerCredentials(fd) else { return nil }
        let connection = VarlinkConnection(
            id: nextConnectionID, fd: fd, peer: peer, maxMessageBytes: limits.maxLineBytes)
        nextConnectionID += 1
        return connection
    }

    func makeRoom() {
        engine.reapHangups()
    }

    func refuse(_ fd: Int32, logCount: Int?) {
        guard let logCount else { return }
        logger.warning(
            "Varlink: refused connections past MaxConnections",
            ["CONNECTIONS_REFUSED": String(logCount), "MAX_CONNECTIONS": String(limits.maxConnections)])
    }

    func handle(_ events: Epoll.Events, on connection: VarlinkConnection) {
        if events.contains(.output) {
            settle(connection)
            guard engine.isOpen(connection) else { return }
        }
        if !events.isDisjoint(with: [.input, .readHangup, .hangup, .error]) {
            readFrom(connection)
        }
    }

    func readFrom(_ connection: VarlinkConnection) {
        connection.activeSinceSweep = true
        switch connection.receive(through: &engine.readBuffer) {
        case .nothing:
            return
        case .failed:
            engine.close(connection)
            return
        case .end:
            connection.inputClosed = true
        case .bytes:
            // A streaming Listen reads no further call; what arrives behind it may not pile up.
            if connection.listen != nil, connection.framer.bufferedCount > limits.maxLineBytes {
                engine.close(connection)
                return
            }
        }
        processMessages(connection)
        settle(connection)
    }

    /// Answers complete messages until one has to wait, the input runs out, or a `Listen` streams.
    func processMessages(_ connection: VarlinkConnection) {
        while !connection.busy, !connection.closeAfterFlush, connection.listen == nil {
            guard limits.takesRequests(pending: connection.pendingBytes) else {
                connection.heldBack = true
                return
            }
            switch connection.framer.next() {
            case .needMore:
                return
            case .tooLong:
                VarlinkReply.write(.messageTooLong(limit: limits.maxLineBytes), to: &connection.output.bytes)
                connection.closeAfterFlush = true
                if let count = refusedMessages.record(now: EngineClock.now()) {
                    logger.warning(
                        "Varlink: closed connections that sent a message over MaxLineBytes",
                        ["PEER_PID": String(connection.peer.pid), "CONNECTIONS": String(count)])
                }
            case .message(let message):
                router.route(
                    message, on: connection, snapshot: snapshot, limits: limits,
                    openConnections: engine.connections.count)
            }
        }
    }

    func settle(_ connection: VarlinkConnection) {
        guard engine.isOpen(connection) else { return }
        flush(connection)
        guard engine.isOpen(connection) else { return }
        if connection.heldBack, limits.takesRequests(pending: connection.pendingBytes) {
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
    func flush(_ connection: VarlinkConnection) {
        let queued = connection.pendingBytes
        guard engine.send(connection) else { return }
        if queued >= MemoryReturn.threshold { engine.loop.memoryReturn.released(queued - connection.pendingBytes) }
        let overrun = limits.isOverrun(
            pending: connection.pendingBytes, flagSetBytes: snapshot.encodedList.count,
            firstMessage: { connection.output.unsentOfFirstMessage(endingWith: VarlinkReply.terminator) })
        guard overrun else { return }
        logger.warning(
            "Varlink: closed a connection whose client does not read its output",
            ["PEER_PID": String(connection.peer.pid), "PENDING_BYTES": String(connection.pendingBytes)])
        engine.close(connection)
    }

    func closing(_ connection: VarlinkConnection) {
        engine.loop.memoryReturn.released(connection.pendingBytes)
        engine.loop.memoryReturn.closed(leaving: engine.loop.openConnections)
        if let listen = connection.listen { router.ended(listen) }
    }

    /// Every `IdleConnectionTimeout`, closes the connections idle since the sweep before: no `Listen`, no call
    /// in flight, no output owed, and nothing received (as the line socket's `sweepIdleIfDue`).
    func sweepIdleIfDue() {
        let now = EngineClock.now()
        guard now >= nextIdleSweep else { return }
        nextIdleSweep = now + limits.idleTimeout
        let closed = engine.closeIdleConnections { $0.listen != nil }
        if closed > 0 {
            logger.debug("Varlink: closed idle connections (IdleConnectionTimeout)", ["CONNECTIONS": String(closed)])
        }
    }
}

import FlagsProtocol
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The loop's steps for one connection: accepting it, reading and answering its lines, writing its output,
/// keeping its epoll interest right, and closing it.
extension ServerLoop {
    func acceptConnections() {
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
    func reapHangups() {
        let count = (try? epoll.wait(into: hangups, timeout: 0)) ?? 0
        for index in 0..<count {
            let event = hangups[index]
            guard !event.events.isDisjoint(with: [.readHangup, .hangup, .error]),
                let connection = connections[event.descriptor]
            else { continue }
            handle(event.events, on: connection)
        }
    }

    func handle(_ events: Epoll.Events, on connection: Connection) {
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

    func readFrom(_ connection: Connection) {
        switch connection.receive(through: &readBuffer) {
        case .nothing:
            return
        case .failed:
            closeConnection(connection)
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
    func settle(_ connection: Connection) {
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

    var isDraining: Bool {
        if case .draining = phase { return true }
        return false
    }

    func flush(_ connection: Connection) {
        guard connection.sendPending() else {
            closeConnection(connection)
            return
        }
        if !propagation.isIdle, connection.pendingBytes == 0 { propagation.written(connection.id, now: Self.now()) }
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

    func updateInterest(_ connection: Connection) {
        let events = connection.wantedEvents(draining: isDraining)
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

    func closeConnection(_ connection: Connection) {
        guard connections[connection.fd] === connection else { return }
        connections[connection.fd] = nil
        subscriptions.remove(connection)
        if !propagation.isIdle { propagation.written(connection.id, now: Self.now()) }
        epoll.remove(connection.fd)
        close(connection.fd)
        // A descriptor is free again: a connection waiting in the backlog may now be accepted.
        gate.resume()
    }
}

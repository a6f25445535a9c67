import FlagsCore
import OFREP
import UnixIO

/// OFREP's steps for one connection: opening it, who gives up a slot when the listener is full, reading,
/// answering in order within `maxPendingBytes`, sending, and the idle deadline.
extension OFREPHandler {
    func open(_ fd: Int32, id: UInt64) -> OFREPConnection? {
        let peer: String
        var peerUID: UInt32?
        if isTCP {
            InetSocket.setNoDelay(fd)
            peer = "ip:" + (InetSocket.peerHost(fd) ?? "?")
        } else {
            peerUID = (try? UnixSocket.peerCredentials(fd))?.uid
            peer = "uid:" + (peerUID.map { String($0) } ?? "?")
        }
        return OFREPConnection(
            fd: fd, peer: peer, peerUID: peerUID,
            parser: HTTPRequestParser(maximumHeadBytes: limits.maxHeadBytes, maximumBodyBytes: limits.maxBodyBytes),
            deadline: EngineClock.now() + limits.idleTimeout, isAuthenticated: responder.token == nil,
            sequence: id)
    }

    /// A full listener makes room by closing the oldest connection that has not shown the token, so clients
    /// without it can never crowd out those with it.
    func makeRoom() {
        let unproven = engine.connections.values.filter { !$0.isAuthenticated }.min { $0.sequence < $1.sequence }
        if let unproven { engine.close(unproven, drainingInput: true) }
    }

    func refuse(_ fd: Int32, logCount: Int?) {
        if let logCount {
            logger.notice(
                "OFREP: refused connections past ConnectionLimit",
                ["CONNECTIONS": String(engine.connections.count), "REFUSED": String(logCount)])
        }
        let answer = OFREPResponder.error(503, details: "too many OFREP connections", headers: [("Retry-After", "1")])
        _ = answer.serialized(closing: true).withUnsafeBytes { UnixSocket.send(fd, $0) }
    }

    func handle(_ ready: Epoll.Events, on connection: OFREPConnection) {
        // A guess waiting for its 401 reads nothing; a hang-up meanwhile ends it.
        if ready.contains(.error) || connection.delayedRefusal != nil {
            engine.close(connection)
            return
        }
        if ready.contains(.output) {
            flush(connection)
            guard engine.isOpen(connection) else { return }
        }
        if ready.contains(.input) || ready.contains(.hangup) || ready.contains(.readHangup) {
            // A stream's client sends nothing after its request: anything more, or its hang-up, ends it.
            if connection.isStream {
                engine.close(connection)
                return
            }
            read(connection)
        }
    }

    func settle(_ connection: OFREPConnection) { flush(connection) }

    func closing(_ connection: OFREPConnection) {
        engine.loop.memoryReturn.closed(leaving: engine.loop.openConnections)
        if connection.isStream { streamCount -= 1 }
        refusals.forget(connection)
    }

    /// Reads once, answers what is complete, sends.
    func read(_ connection: OFREPConnection) {
        guard connection.pendingCount == 0, !connection.closesAfterFlush else { return }
        let result = engine.readBuffer.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try Descriptor.readAvailable(connection.fd, into: raw) }
        }
        switch result {
        case .failure:
            engine.close(connection)
            return
        case .success(nil):
            return
        case .success(0):
            // The client finished sending; what it sent is still answered, then the connection ends.
            connection.closesAfterFlush = true
            answer(connection, endOfInput: true)
        case .success(let count?):
            connection.parser.append(engine.readBuffer[0..<count])
            answer(connection, endOfInput: false)
        }
        flush(connection)
    }

    /// Answers the whole requests the parser holds, until the connection has `maxPendingBytes` queued.
    func answer(_ connection: OFREPConnection, endOfInput: Bool) {
        while connection.pendingCount < limits.maxPendingBytes {
            switch connection.parser.next() {
            case .incomplete:
                return
            case .continueExpected:
                connection.enqueue(HTTPResponse.continueBytes)
            case .failure(let failure):
                logger.debug(
                    "OFREP: request refused", ["HTTP_STATUS": String(failure.status), "REASON": failure.reason])
                connection.enqueue(OFREPResponder.refusal(failure), closing: true)
                metrics.ofrepAnswered(endpoint: "other", status: failure.status)
                connection.closesAfterFlush = true
                return
            case .request(let request) where request.path == OFREPEventStreams.path && !responder.isPreflight(request):
                openStream(connection, request)
                return
            case .request(let request):
                let response = responder.respond(
                    to: request, flags: { advertisedFlags(now: EngineClock.now()) },
                    admit: { limiter.admit(connection.peer, now: Double(EngineClock.now()) / 1e9) },
                    evaluated: evaluations.isOn
                        ? { [evaluations, revision = flags.revision] in
                            evaluations.evaluated($0, flag: $1, revision: revision)
                        } : nil)
                metrics.ofrepAnswered(endpoint: OFREPResponder.endpoint(of: request.path), status: response.status)
                // A request without the token ends its connection: it holds no slot and earns no more time. A
                // preflight needs no token, so it proves nothing: its connection stays displaceable.
                let refused = response.status == 401
                if !refused, !responder.isPreflight(request) { connection.isAuthenticated = true }
                if refused, !refusals.admit(response, on: connection, now: Double(EngineClock.now()) / 1e9) {
                    return
                }
                let closing = refused || !request.keepsAlive || endOfInput || stopRequested.withLock { $0 }
                connection.enqueue(response, closing: closing)
                connection.deadline = EngineClock.now() + limits.idleTimeout
                if closing {
                    connection.closesAfterFlush = true
                    return
                }
            }
        }
    }

    /// Sends what the socket takes; watches for writability while some remains, and answers the requests
    /// that waited behind a full buffer once it empties.
    func flush(_ connection: OFREPConnection) {
        guard engine.send(connection) else { return }
        if connection.delayedRefusal != nil {
            engine.setInterest(connection, [])
            return
        }
        if connection.pendingCount > 0 {
            engine.setInterest(connection, .output)
            return
        }
        if connection.closesAfterFlush {
            engine.close(connection, drainingInput: true)
            return
        }
        // Requests that arrived behind a full buffer come next, before anything more is read.
        if !connection.isStream, connection.parser.bufferedCount > 0 {
            answer(connection, endOfInput: false)
            if connection.pendingCount > 0 {
                flush(connection)
                return
            }
        }
        engine.setInterest(connection, [.input, .readHangup])
    }

    /// Sends the 401s whose turn came (`DelayedRefusals`), each closing its connection.
    func releaseRefusals(now: UInt64) {
        guard !refusals.isEmpty else { return }
        for connection in refusals.due(now: Double(now) / 1e9) where engine.isOpen(connection) {
            guard let answer = connection.delayedRefusal else { continue }
            connection.delayedRefusal = nil
            connection.enqueue(answer, closing: true)
            connection.closesAfterFlush = true
            flush(connection)
        }
    }

    /// Past the deadline: a connection between requests just closes; one in the middle of a request gets 408.
    func expire(_ connection: OFREPConnection) {
        if !connection.parser.isIdle, connection.pendingCount == 0, !connection.closesAfterFlush {
            let answer = OFREPResponder.error(408, details: "the request did not arrive in time")
            _ = answer.serialized(closing: true).withUnsafeBytes { UnixSocket.send(connection.fd, $0) }
        }
        engine.close(connection, drainingInput: true)
    }
}

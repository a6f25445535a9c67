import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The engine's steps for one connection that every protocol shares: sending its output, its epoll interest,
/// and closing it.
extension EventEngine {
    /// Whether `connection` is still open (the table holds it, not a later connection on the same descriptor).
    func isOpen(_ connection: Connection) -> Bool {
        connections[connection.fd] === connection
    }

    /// Writes what the socket takes now; closes the connection and returns false when the socket failed.
    @discardableResult
    func send(_ connection: Connection) -> Bool {
        guard connection.output.send(to: connection.fd) else {
            close(connection)
            return false
        }
        return true
    }

    /// Registers `events` for the connection (once registered, changes them); closes it if epoll refuses.
    func setInterest(_ connection: Connection, _ events: Epoll.Events) {
        guard events != connection.interest else { return }
        do {
            if connection.interest.isEmpty {
                try membershipOrThrow().add(connection.fd, events: events)
            } else {
                try loop.epoll.modify(connection.fd, events: events)
            }
            connection.interest = events
        } catch {
            close(connection)
        }
    }

    /// Closes a connection. With `drainingInput`, unread bytes are read away first, so that the kernel ends the
    /// stream with FIN rather than a reset that could destroy the last answer before the client reads it.
    func close(_ connection: Connection, drainingInput: Bool = false) {
        guard isOpen(connection) else { return }
        connections[connection.fd] = nil
        loop.openConnections -= 1
        share.closed(connection.peerUID)
        handler.closing(connection)
        removeFromLoop(connection.fd)
        if drainingInput {
            _ = shutdown(connection.fd, Int32(SHUT_WR))
            for _ in 0..<4 {
                let count: Int? = readBuffer.withUnsafeMutableBytes { raw in
                    (try? Descriptor.readAvailable(connection.fd, into: raw)) ?? nil
                }
                guard let count, count > 0 else { break }
            }
        }
        Glibc.close(connection.fd)
        // A descriptor is free again: a connection waiting in the backlog may now be accepted.
        gate.resume()
    }
}

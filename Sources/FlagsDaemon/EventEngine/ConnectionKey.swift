/// Names one connection from another thread: its descriptor, to find it in the engine's table at once, and its
/// id, to tell it from a later connection on the same descriptor.
///
/// Work carried out off the loop carries the key back with its answer, so that the loop finds the connection in
/// one lookup; by id alone it walked the whole table for each answer (up to `MaxConnections` entries).
struct ConnectionKey: Hashable, Sendable {
    let fd: Int32
    let id: UInt64
}

/// A connection with an id of its own (descriptors are reused, ids are not).
protocol IdentifiedConnection: EngineConnection {
    var id: UInt64 { get }
}

extension IdentifiedConnection {
    var key: ConnectionKey { ConnectionKey(fd: fd, id: id) }
}

extension EventEngine where Handler.Connection: IdentifiedConnection {
    /// The open connection `key` names; nil once it has closed, even when a newer one has its descriptor.
    func connection(_ key: ConnectionKey) -> Connection? {
        guard let connection = connections[key.fd], connection.id == key.id else { return nil }
        return connection
    }
}

import FlagsCore
import FlagsProtocol

extension LineConnection {
    /// Writes the `FlagListing` of `getAll` and `listen` from the snapshot's encodings, shared rather than
    /// copied (`FlagSnapshot.writeFlags`).
    /// `unchanged`: no flags, `"unchanged":true` (a `listen` whose `since` is the snapshot's position).
    func writeListing(
        id: RequestID, subscription: (id: String, expiresAt: JSONValue)?, keys: Set<FlagKey>? = nil,
        snapshot: FlagSnapshot, unchanged: Bool = false
    ) {
        Message.writeResultPrefix(id: id, to: &output.bytes)
        let listen = subscription.map { ($0.id, $0.expiresAt) }
        if unchanged {
            FlagListing.writeUnchanged(
                epoch: snapshot.epoch, revision: snapshot.revision, listen: listen, to: &output.bytes)
            output.bytes.append(contentsOf: Message.resultSuffix)
            return
        }
        if listen == nil {
            output.bytes.append(contentsOf: snapshot.listingHead)
        } else {
            FlagListing.writeHead(epoch: snapshot.epoch, revision: snapshot.revision, listen: listen, to: &output.bytes)
        }
        snapshot.writeFlags(of: keys, to: &output)
        FlagListing.writeTail(fromNetwork: nil, to: &output.bytes)
        output.bytes.append(contentsOf: Message.resultSuffix)
    }
}

import FlagsCore
import FlagsProtocol

extension Connection {
    /// Writes the `FlagListing` of `getAll` and `listen` from the snapshot's encodings. Every flag: the
    /// snapshot's shared encoding, queued by reference. Chosen keys: their flags' encodings, sorted by key.
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
        if let keys {
            output.bytes.append(UInt8(ascii: "["))
            var first = true
            for key in keys.sorted() {
                guard let encoded = snapshot.encoded[key] else { continue }
                if !first { output.bytes.append(UInt8(ascii: ",")) }
                first = false
                output.bytes.append(contentsOf: encoded)
            }
            output.bytes.append(UInt8(ascii: "]"))
        } else if snapshot.encodedList.count < 4096 {
            output.bytes.append(
                contentsOf: UnsafeRawBufferPointer(start: snapshot.encodedList.base, count: snapshot.encodedList.count))
        } else {
            output.append(shared: snapshot.encodedList)
        }
        FlagListing.writeTail(fromNetwork: nil, to: &output.bytes)
        output.bytes.append(contentsOf: Message.resultSuffix)
    }
}

import FlagsCore
import FlagsProtocol

/// The one rule for listening, which the line socket's `listen` and Varlink's `Listen` both ask: a connection
/// holds at most `MaxSubscriptions` listens, and their keys at most `MaxListenKeys` units.
///
/// A key costs one unit, and one more for every further 64 bytes of a long key, so that the limit bounds the
/// memory the keys take and not only their number. A listen to every key (no keys) holds no key and costs
/// nothing.
enum ListenBounds {
    /// The key bytes one unit pays for.
    static let bytesPerUnit = 64

    /// The units of `keys` (already without duplicates); 0 for every key.
    static func units(of keys: Set<FlagKey>?) -> Int {
        guard let keys else { return 0 }
        return keys.reduce(0) { total, key in
            total + max(1, (key.string.utf8.count + bytesPerUnit - 1) / bytesPerUnit)
        }
    }

    /// Opens one more listen of `keys` on `connection`, which holds `listens` already: its units grow by the
    /// keys' cost. Returns the error that refuses it past a bound, or nil.
    static func open(
        _ keys: Set<FlagKey>?, on connection: FramedConnection, listens: Int, limits: ServerLimits
    ) -> RPCError? {
        guard listens < limits.maxSubscriptions else { return .tooManySubscriptions(limit: limits.maxSubscriptions) }
        let units = units(of: keys)
        guard connection.listenKeyUnits + units <= limits.maxListenKeys else {
            return .tooManyListenKeys(limit: limits.maxListenKeys, held: connection.listenKeyUnits, requested: units)
        }
        connection.listenKeyUnits += units
        return nil
    }

    /// A listen of `keys` on `connection` ended: its units are free again.
    static func close(_ keys: Set<FlagKey>?, on connection: FramedConnection) {
        connection.listenKeyUnits -= units(of: keys)
    }
}

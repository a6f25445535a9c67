import FeatureFlags
import FlagsProtocol

extension FlagListing {
    /// Checks an `unchanged` answer to `listen` (`pwflags listen` and `listen --exec` resuming): it only ever
    /// answers the position sent; anything else leaves nothing to resume from, so `position` is forgotten and
    /// the error thrown.
    func checkResumed(from position: inout StreamPosition?) throws(ClientError) {
        guard position != nil, self.position == position else {
            position = nil
            throw .protocolViolation("an unchanged answer to a position it was not given")
        }
    }
}

import FlagsCore
import FlagsProtocol
import TestSupport

extension RawClient {
    /// An expected answer or notification that did not come, or could not be read.
    struct MissingAnswer: Error, CustomStringConvertible {
        var description: String
    }

    /// The next `flagsChanged` notification, decoded; throws when none came within `timeout`.
    func nextChange(timeout: Duration = .seconds(10)) throws -> FlagsChanged {
        guard let params = readNotification(timeout: timeout) else {
            throw MissingAnswer(description: "no flagsChanged")
        }
        guard let change = FlagsChanged(params: params) else {
            throw MissingAnswer(description: "bad flagsChanged \(params)")
        }
        return change
    }

    /// Calls a method answered with a flag list (`getAll`, `listen`, `refresh`) and decodes the list.
    func listing(_ method: String, _ params: JSONValue? = nil, id: JSONValue = 1) throws -> FlagListing {
        guard let response = try call(method, params, id: id) else {
            throw MissingAnswer(description: "no answer to \(method)")
        }
        guard let result = response["result"], let listing = FlagListing(result: result) else {
            throw MissingAnswer(description: "no flag list in \(response)")
        }
        return listing
    }
}

import FeatureFlags
import FlagsCore
import FlagsProtocol

/// `pwflags listen KEY...` without `--exec`: a line for each change of the listened flags, for ever.
///
/// When the daemon goes away (a restart, an upgrade) the listener waits for it and resumes from the epoch and
/// revision it saw, as the client library does: a daemon that stands where it left off answers "unchanged"; any
/// other sends its listing, and only the flags that differ from what was printed are printed. No change is
/// printed twice and none is missed.
struct ChangePrinter {
    /// Nil: every flag.
    let keys: [String]?
    let socketPath: String
    let json: Bool
    /// The listened flags as the lines printed so far leave them; nil before the first listing.
    private var known: [String: Flag]?
    /// Where `known` stands in the daemon's change stream.
    private var position: StreamPosition?

    init(keys: [String]?, socketPath: String, json: Bool) {
        self.keys = keys
        self.socketPath = socketPath
        self.json = json
    }

    /// Listens for ever (the process ends with a signal), reconnecting whenever the daemon goes away. Throws
    /// only when the first `listen` fails (a refused key list): that is the command's answer.
    mutating func run(from first: DaemonConnection) throws(ClientError) -> Never {
        var connection = first
        try subscribe(connection)
        while true {
            do {
                try printChanges(from: connection)
            } catch {
                Output.error("\(error); waiting for pwflagsd to come back")
            }
            while true {
                connection = DaemonConnection.reconnecting(to: socketPath)
                do {
                    try subscribe(connection)
                    break
                } catch {
                    Output.error("\(error); waiting for pwflagsd to come back")
                }
            }
        }
    }

    /// Subscribes, resuming from `position`, and prints what changed meanwhile.
    private mutating func subscribe(_ connection: DaemonConnection) throws(ClientError) {
        let listing = try connection.call(.listen(keys: keys, since: position), as: FlagListing.self)
        guard let subscription = listing.subscription else {
            throw .protocolViolation("listen without subscription")
        }
        if listing.unchanged {
            try listing.checkResumed(from: &position)
        } else {
            resume(from: listing, subscription: subscription)
        }
    }

    /// Prints each change as it comes, until the connection ends.
    private mutating func printChanges(from connection: DaemonConnection) throws(ClientError) -> Never {
        while true {
            let (method, params) = try connection.nextNotification()
            guard method == FlagsChanged.method, let change = FlagsChanged(params: params) else { continue }
            position = StreamPosition(epoch: change.epoch ?? position?.epoch ?? "", revision: change.revision)
            print(change, params: params)
        }
    }

    /// Takes a whole listing: the first one as the start, a later one (the daemon restarted, or moved on while
    /// it was out of reach) as a change from what was printed.
    ///
    /// A listing at revision 0 says nothing about the flags (a daemon just started with no cache): it moves the
    /// position only, and the daemon's first change is compared with what was printed.
    private mutating func resume(from listing: FlagListing, subscription: String) {
        position = listing.position ?? StreamPosition(epoch: "", revision: listing.revision)
        let flags = Dictionary(listing.flags.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
        guard let known else {
            self.known = flags
            return
        }
        guard listing.revision > 0 else { return }
        let changed = flags.values.filter { known[$0.key] != $0 }.sorted { $0.key < $1.key }
        let removed = known.keys.filter { flags[$0] == nil }.sorted()
        print(
            FlagsChanged(
                subscription: subscription, epoch: listing.epoch, revision: listing.revision, changed: changed,
                removed: removed, expiresAt: listing.expiresAt),
            params: nil)
    }

    /// Prints the flags of `change` that differ from what was printed, and remembers them. `params`: the
    /// notification as received, printed as it is with `--json` when nothing was left out of it.
    private mutating func print(_ change: FlagsChanged, params: JSONValue?) {
        var known = self.known ?? [:]
        let changed = change.changed.filter { known[$0.key] != $0 }
        let removed = change.removed.filter { known[$0] != nil }
        for flag in change.changed { known[flag.key] = flag }
        for key in change.removed { known[key] = nil }
        self.known = known
        guard !changed.isEmpty || !removed.isEmpty else { return }
        if json {
            let whole = changed.count == change.changed.count && removed.count == change.removed.count
            let text = (whole ? params : nil)?.serialized() ?? Self.params(of: change, changed, removed).serialized()
            Output.line(text, exact: true)
            return
        }
        for flag in changed {
            Output.line("revision \(change.revision): changed \(Commands.describe(flag, compact: true))")
        }
        for key in removed { Output.line("revision \(change.revision): removed \(key)") }
    }

    /// The params object of a `flagsChanged` notification holding only `changed` and `removed`.
    private static func params(of change: FlagsChanged, _ changed: [Flag], _ removed: [String]) -> JSONValue {
        var members: [String: JSONValue] = [
            "subscription": .string(change.subscription), "revision": .number(Double(change.revision)),
            "changed": .array(changed.map(\.wireValue)), "removed": .array(removed.map(JSONValue.string)),
        ]
        if let epoch = change.epoch { members["epoch"] = .string(epoch) }
        if let expiresAt = change.expiresAt { members["expiresAt"] = expiresAt }
        return .object(members)
    }
}

import FeatureFlags
import FlagsCore
import FlagsProtocol
import FoundationEssentials
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// `pwflags listen --exec CMD KEY...`: runs CMD through `/bin/sh -c` after each change of the listened flags,
/// for units that read a flag only at start (`systemctl try-restart`).
///
/// One run at a time: changes that come while the command runs are gathered and run it once more after it.
/// A failing command is reported on stderr and listening goes on. When the daemon goes away the listener waits
/// for it and resumes from the epoch and revision it saw: a restarted daemon whose listened flags are the same
/// runs nothing, one whose flags changed meanwhile runs the command once.
struct ChangeCommand {
    let command: String
    /// Nil: every flag.
    let keys: [String]?
    let socketPath: String
    /// The listened flags as the daemon serves them now.
    private var current: [String: Flag] = [:]
    /// The listened flags as the last run (or the start) saw them; nil before the first listing.
    private var seen: [String: Flag]?
    /// Where `current` stands in the daemon's change stream.
    private var position: StreamPosition?

    init(command: String, keys: [String]?, socketPath: String) {
        self.command = command
        self.keys = keys
        self.socketPath = socketPath
    }

    /// Listens for ever (the process ends with a signal), reconnecting whenever the daemon goes away.
    mutating func run(from first: DaemonConnection) -> Never {
        var connection = first
        while true {
            do {
                try follow(connection)
            } catch {
                Output.error("\(error); waiting for pwflagsd to come back")
            }
            connection = DaemonConnection.reconnecting(to: socketPath)
        }
    }

    /// Subscribes (resuming from `position`), then runs the command after each batch of changes.
    private mutating func follow(_ connection: DaemonConnection) throws(ClientError) {
        let listing = try connection.call(.listen(keys: keys, since: position), as: FlagListing.self)
        guard listing.subscription != nil else { throw .protocolViolation("listen without subscription") }
        if listing.unchanged {
            try listing.checkResumed(from: &position)
        } else {
            current = Dictionary(listing.flags.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
            position = listing.position ?? StreamPosition(epoch: "", revision: listing.revision)
        }
        if seen == nil { seen = current }
        runIfChanged()
        while true {
            var notification = try connection.nextNotification()
            while true {
                apply(notification)
                // A burst of changes (or those that came during the last run) makes one run.
                guard let next = try connection.nextNotification(timeout: .milliseconds(10)) else { break }
                notification = next
            }
            runIfChanged()
        }
    }

    private mutating func apply(_ notification: (method: String, params: JSONValue)) {
        guard notification.method == FlagsChanged.method, let change = FlagsChanged(params: notification.params)
        else { return }
        for flag in change.changed { current[flag.key] = flag }
        for key in change.removed { current[key] = nil }
        position = StreamPosition(epoch: change.epoch ?? position?.epoch ?? "", revision: change.revision)
    }

    /// Runs the command when the listened flags differ from what the last run saw.
    ///
    /// Not at revision 0: a daemon that has no flag set yet (just started, no cache) says nothing about the
    /// flags; its first change does.
    private mutating func runIfChanged() {
        guard let seen, let position, position.revision > 0 else { return }
        let changed = current.filter { seen[$0.key] != $0.value }.keys.sorted()
        let removed = seen.keys.filter { current[$0] == nil }.sorted()
        guard !changed.isEmpty || !removed.isEmpty else { return }
        self.seen = current
        var environment = ProcessInfo.processInfo.environment
        environment["PWFLAGS_EPOCH"] = position.epoch
        environment["PWFLAGS_REVISION"] = String(position.revision)
        environment["PWFLAGS_CHANGED"] = Self.keyList(changed)
        environment["PWFLAGS_REMOVED"] = Self.keyList(removed)
        environment["PWFLAGS_SOCKET"] = socketPath
        do {
            let ended = try ChildProcess.run(
                ["/bin/sh", "-c", command], environment: environment.map { "\($0.key)=\($0.value)" })
            if ended != .exited(0) {
                Output.error("the command \(ended) (revision \(position.revision)); listening on")
            }
        } catch {
            Output.error("cannot run the command: \(error); listening on")
        }
    }

    /// Keys separated by spaces, each with `%`, space and every control character (NUL, tab, newline, DEL…)
    /// written as `%XX`: no key can cut the list short or read as two keys in `for k in $PWFLAGS_CHANGED`.
    static func keyList(_ keys: [String]) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for (position, key) in keys.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: " ")) }
            for byte in key.utf8 {
                if byte == UInt8(ascii: "%") || byte == UInt8(ascii: " ") || byte < 0x20 || byte == 0x7F {
                    bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                } else {
                    bytes.append(byte)
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

}

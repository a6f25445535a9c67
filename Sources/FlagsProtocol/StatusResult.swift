public import FlagsCore

/// The result of `status`: what the daemon serves, where from, and how its refreshes, sessions, connections
/// and impressions stand. Never the API token.
///
/// Times are ISO 8601 UTC timestamps, nil (null on the wire) when there is none.
public struct StatusResult: CallResult, Equatable {
    public var version = ""
    /// `pushwoosh` or `file`.
    public var source = ""
    /// Nil with the local file.
    public var applicationCode: String?
    public var hwid = ""
    public var userId = ""
    /// The flags served and the revision of the flag set.
    public var flags = 0
    public var revision = 0
    /// New at every daemon start (as `FlagListing.epoch`); nil from a daemon older than this member.
    public var epoch: String?
    public var fetchedAt: String?
    public var stale = false
    public var partial = false
    public var lastError: LastError?
    public var nextRefreshAt: String?
    /// Pushwoosh asked with `Retry-After` that no request go before this (F3); nil when nothing is held.
    public var heldUntil: String?
    /// `foreground` or `background`.
    public var appState = "foreground"
    public var sessionStartedAt: String?
    public var connections = 0
    public var subscriptions = 0
    public var impressions = Impressions()
    /// When the flags served reach their age; nil when they never expire.
    public var expiresAt: String?
    /// Why the disk cache could not be written the last time, until a write succeeds.
    public var cacheError: CacheError?
    /// Why the configured source cannot be used (a broken flags file, a refused token), for people.
    public var problem: String?

    /// The last failed refresh: its R11 status, why, and when.
    public struct LastError: Sendable, Equatable {
        public var status: Int
        public var at: String
        /// Why, in one word: `dns`, `connect`, `tls`, `timeout`, `tooLarge`, `cancelled`, `network`, `http`,
        /// `unusable` or `notSent`; nil from a daemon older than this member.
        public var kind: String?
        /// The failure in words, never with the API token; nil from a daemon older than this member.
        public var reason: String?

        public init(status: Int, at: String, kind: String? = nil, reason: String? = nil) {
            self.status = status
            self.at = at
            self.kind = kind
            self.reason = reason
        }

        /// Reads a `lastError` object; nil for null or a malformed one.
        public init?(json: JSONValue?) {
            guard let json, let status = json["status"]?.integerValue, let at = json["at"]?.stringValue else {
                return nil
            }
            self.init(status: status, at: at, kind: json["kind"]?.stringValue, reason: json["reason"]?.stringValue)
        }

        /// The `lastError` object.
        public var json: JSONValue {
            var members: [String: JSONValue] = ["status": .number(Double(status)), "at": .string(at)]
            if let kind { members["kind"] = .string(kind) }
            if let reason { members["reason"] = .string(reason) }
            return .object(members)
        }
    }

    /// Why the disk cache was not written, and when.
    public struct CacheError: Sendable, Equatable {
        public var reason: String
        public var at: String

        public init(reason: String, at: String) {
            self.reason = reason
            self.at = at
        }
    }

    /// Impressions since start, by outcome.
    public struct Impressions: Sendable, Equatable {
        public var sent = 0
        public var duplicate = 0
        public var failed = 0
        /// Written to the daemon's log by the local source instead of being sent.
        public var logged = 0

        public init(sent: Int = 0, duplicate: Int = 0, failed: Int = 0, logged: Int = 0) {
            self.sent = sent
            self.duplicate = duplicate
            self.failed = failed
            self.logged = logged
        }
    }

    /// Where the daemon stands on its message bus (`[DBus]`); nil when `Bus=no`.
    public var bus: Bus?

    /// The seed the daemon read (`SeedFile`); nil when none is configured or it was refused.
    public var seed: Seed?

    /// The flags a device image ships (`SeedFile`), served while the daemon has no usable flags of its own.
    public struct Seed: Sendable, Equatable {
        /// The file.
        public var file: String
        /// When it was exported, as the seed says; nil when it does not.
        public var exportedAt: String?
        /// How many flags it holds.
        public var flags: Int
        /// True while its flags are the ones served: nothing usable was fetched yet, or the fetched flags expired.
        public var serving: Bool

        public init(file: String, exportedAt: String?, flags: Int, serving: Bool) {
            self.file = file
            self.exportedAt = exportedAt
            self.flags = flags
            self.serving = serving
        }

        var json: JSONValue {
            [
                "file": .string(file), "exportedAt": exportedAt.map(JSONValue.string) ?? .null,
                "flags": .number(Double(flags)), "serving": .bool(serving),
            ]
        }

        init?(json: JSONValue?) {
            guard let json, let file = json["file"]?.stringValue, let flags = json["flags"]?.integerValue,
                let serving = json["serving"]?.boolValue
            else { return nil }
            self.init(file: file, exportedAt: json["exportedAt"]?.stringValue, flags: flags, serving: serving)
        }
    }

    /// The daemon on a message bus: which bus, the name, and whether it serves there now.
    public struct Bus: Sendable, Equatable {
        /// `system` or `session`.
        public var bus: String
        public var name: String
        /// `serving` (the name is owned), `connecting` (waiting for the bus or the name), or `unavailable`
        /// (the connection failed or was lost; the daemon tries again).
        public var state: String
        /// Why it is not serving, for `unavailable` and a refused name; nil otherwise.
        public var reason: String?

        public init(bus: String, name: String, state: String, reason: String? = nil) {
            self.bus = bus
            self.name = name
            self.state = state
            self.reason = reason
        }

        var json: JSONValue {
            [
                "bus": .string(bus), "name": .string(name), "state": .string(state),
                "reason": reason.map(JSONValue.string) ?? .null,
            ]
        }

        init?(json: JSONValue?) {
            guard let json, let bus = json["bus"]?.stringValue, let name = json["name"]?.stringValue,
                let state = json["state"]?.stringValue
            else { return nil }
            self.init(bus: bus, name: name, state: state, reason: json["reason"]?.stringValue)
        }
    }

    public init() {}

    /// Reads a status object. Every member is optional: one this reader does not find keeps its default, so a
    /// daemon older or newer than this reader still tells what it knows (a mirror needs only `expiresAt`).
    public init?(result: JSONValue) {
        guard result.objectValue != nil else { return nil }
        version = result["version"]?.stringValue ?? ""
        source = result["source"]?.stringValue ?? ""
        applicationCode = result["applicationCode"]?.stringValue
        hwid = result["hwid"]?.stringValue ?? ""
        userId = result["userId"]?.stringValue ?? ""
        flags = result["flags"]?.integerValue ?? 0
        revision = result["revision"]?.integerValue ?? 0
        epoch = result["epoch"]?.stringValue
        fetchedAt = result["fetchedAt"]?.stringValue
        stale = result["stale"]?.boolValue ?? false
        partial = result["partial"]?.boolValue ?? false
        lastError = LastError(json: result["lastError"])
        nextRefreshAt = result["nextRefreshAt"]?.stringValue
        heldUntil = result["heldUntil"]?.stringValue
        appState = result["appState"]?.stringValue ?? "foreground"
        sessionStartedAt = result["sessionStartedAt"]?.stringValue
        connections = result["connections"]?.integerValue ?? 0
        subscriptions = result["subscriptions"]?.integerValue ?? 0
        if let counts = result["impressions"] {
            impressions = Impressions(
                sent: counts["sent"]?.integerValue ?? 0, duplicate: counts["duplicate"]?.integerValue ?? 0,
                failed: counts["failed"]?.integerValue ?? 0, logged: counts["logged"]?.integerValue ?? 0)
        }
        expiresAt = result["expiresAt"]?.stringValue
        if let error = result["cacheError"], let reason = error["reason"]?.stringValue,
            let at = error["at"]?.stringValue
        {
            cacheError = CacheError(reason: reason, at: at)
        }
        problem = result["problem"]?.stringValue
        bus = Bus(json: result["bus"])
        seed = Seed(json: result["seed"])
    }

    /// Appends the status object, members sorted by name.
    public func write(to output: inout [UInt8]) {
        members.write(to: &output)
    }

    private var members: JSONValue {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func number(_ value: Int) -> JSONValue { .number(Double(value)) }
        return [
            "version": .string(version),
            "source": .string(source),
            "applicationCode": text(applicationCode),
            "hwid": .string(hwid),
            "userId": .string(userId),
            "flags": number(flags),
            "revision": number(revision),
            "epoch": text(epoch),
            "fetchedAt": text(fetchedAt),
            "stale": .bool(stale),
            "partial": .bool(partial),
            "lastError": lastError?.json ?? .null,
            "nextRefreshAt": text(nextRefreshAt),
            "heldUntil": text(heldUntil),
            "appState": .string(appState),
            "sessionStartedAt": text(sessionStartedAt),
            "connections": number(connections),
            "subscriptions": number(subscriptions),
            "impressions": [
                "sent": number(impressions.sent), "duplicate": number(impressions.duplicate),
                "failed": number(impressions.failed), "logged": number(impressions.logged),
            ],
            "expiresAt": text(expiresAt),
            "cacheError": cacheError.map { ["reason": .string($0.reason), "at": .string($0.at)] } ?? .null,
            "problem": text(problem),
            "bus": bus?.json ?? .null,
            "seed": seed?.json ?? .null,
        ]
    }
}

import FlagsCore
import Foundation
import TestSupport
import Testing

/// Flags and daemons the integration suites share.
enum Fixtures {
    static let checkout = Flag(
        key: "new_checkout", isEnabled: true, ruleId: "r_1a2b3c4d", properties: ["button_color": "green"])
    static let banner = Flag(key: "banner", isEnabled: false, ruleId: "default")
    static let search = Flag(key: "search_v2", isEnabled: true, ruleId: "r_5e6f")

    /// The cache file's path in a daemon's state directory.
    static func cachePath(_ daemon: DaemonProcess) -> String {
        daemon.directory.file("state/flags-cache.json")
    }

    /// The cache file's text, or nil when there is none.
    static func cacheText(_ daemon: DaemonProcess) -> String? {
        try? String(contentsOfFile: cachePath(daemon), encoding: .utf8)
    }

    /// Starts the daemon against `server` with the given keys (all other durations long), in `directory` when
    /// given (a restart).
    static func daemon(
        _ server: FakePushwooshServer,
        featureFlags: [String: String] = [:],
        pushwoosh: [String: String] = [:],
        applicationCode: String = "ABCDE-12345",
        serverURL: String? = nil,
        directory: TemporaryDirectory? = nil,
        environment: [String: String] = [:]
    ) throws -> DaemonProcess {
        let config = PushwooshConfig.text(
            serverURL: serverURL ?? server.baseURL.absoluteString,
            applicationCode: applicationCode,
            pushwoosh: pushwoosh,
            featureFlags: featureFlags
        )
        return try DaemonProcess(config: config, directory: directory, environment: environment)
    }

    /// Waits until `get(key)` returns a flag.
    static func waitForFlag(_ key: String, on session: SocketSession, timeout: Duration = .seconds(10)) async throws
        -> Bool
    {
        try await Eventually.wait(timeout: timeout) { try session.get(key)?.isNull == false }
    }

    /// A refresh the fake server holds: a session that has read new_checkout, then a `refresh` sent on a second
    /// connection (`refresher`, kept open by the caller for its answer) once it reached the server as its second
    /// request (`requests`).
    static func refreshHeld(on daemon: DaemonProcess, by server: FakePushwooshServer) async throws
        -> (session: SocketSession, refresher: RawClient, requests: [RecordedRequest])
    {
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await waitForFlag("new_checkout", on: session))
        let refresher = try RawClient(socketPath: daemon.socketPath)
        try refresher.send(line: #"{"id":1,"method":"refresh"}"#)
        let requests = try await server.waitForRequests(count: 2)
        return (session, refresher, requests)
    }

    // MARK: The local-file suites: the flags of config/demo-flags.json

    static let newCheckout = Flag(
        key: "new_checkout",
        isEnabled: true,
        ruleId: "r_1a2b3c4d",
        properties: [
            "button_color": "green", "max_items": 5, "express": true, "layout": ["columns": 2],
            "steps": ["cart", "pay"],
        ]
    )
    static let searchV2 = Flag(
        key: "search_v2", isEnabled: true, ruleId: "default", properties: ["results_per_page": 20])
    static let darkMode = Flag(key: "dark_mode", isEnabled: false, ruleId: "r_5e6f7a8b", properties: ["theme": "light"])
    static let holidayBanner = Flag(
        key: "holiday_banner",
        isEnabled: false,
        ruleId: "",
        properties: ["text": "Happy holidays", "dismissible": true]
    )
    /// Differs from `newCheckout` only in the case of its key (R2).
    static let newCheckoutUpper = Flag(key: "New_Checkout", isEnabled: false, ruleId: "r_upper")

    static let all = [newCheckout, searchV2, darkMode, holidayBanner, newCheckoutUpper]

    /// The wire objects of `flags` served from `source`, sorted by key as `getAll` returns them.
    static func wire(_ flags: [Flag], source: String = "file") -> JSONValue {
        .array(flags.sorted { $0.key < $1.key }.map { wireValue($0, source: source) })
    }

    /// The flag object of docs/protocol.md, as the daemon serves it from `source` (the local file
    /// of these fixtures by default).
    static func wireValue(_ flag: Flag, source: String = "file") -> JSONValue {
        [
            "key": .string(flag.key), "enabled": .bool(flag.isEnabled), "ruleId": .string(flag.ruleId),
            "properties": .object(flag.properties), "source": .string(source),
        ]
    }
}

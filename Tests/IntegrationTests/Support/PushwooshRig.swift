import TestSupport

/// The one way an integration test starts a fake Pushwoosh: with a daemon that fetches from it, the setup most
/// Pushwoosh suites begin with, or alone (`server(replies:)`) for a test that starts its daemons itself.
///
///     let rig = try PushwooshRig.start { $0.setDefaultReply(.hang, for: "getFeatureFlags") }
///     defer { rig.stop() }
///
/// A test says only what is particular to it: the server's replies and the daemon's keys (or the whole daemon,
/// through `start(daemon:replies:)`); the order (replies before the daemon's first request) and the teardown are
/// the rig's.
struct PushwooshRig {
    let server: FakePushwooshServer
    let daemon: DaemonProcess

    /// What the server answers unless a test says otherwise: the checkout flag to every `getFeatureFlags`.
    static func checkoutReplies(_ server: FakePushwooshServer) {
        server.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags")
    }

    /// Starts the server, lets `replies` set what it answers (by default the checkout flag to every
    /// `getFeatureFlags`) before the daemon's first request, then starts the daemon (see `Fixtures.daemon`).
    static func start(
        featureFlags: [String: String] = [:],
        pushwoosh: [String: String] = [:],
        applicationCode: String = "ABCDE-12345",
        directory: TemporaryDirectory? = nil,
        environment: [String: String] = [:],
        replies: (FakePushwooshServer) -> Void = Self.checkoutReplies
    ) throws -> PushwooshRig {
        try start(
            daemon: {
                try Fixtures.daemon(
                    $0, featureFlags: featureFlags, pushwoosh: pushwoosh, applicationCode: applicationCode,
                    directory: directory, environment: environment)
            },
            replies: replies)
    }

    /// The fake alone, for a test that starts its daemons itself (several on one server, or one after another on
    /// a directory it prepared); it answers `.flags([])` until `replies` or the test says otherwise. The test
    /// stops it.
    static func server(replies: (FakePushwooshServer) -> Void = { _ in }) throws -> FakePushwooshServer {
        let server = try FakePushwooshServer.start()
        replies(server)
        return server
    }

    /// Starts the server (or takes `server`), lets `replies` set what it answers (`checkoutReplies`, say), then
    /// starts the daemon `makeDaemon` configures for it (a suite's own configuration); the server is stopped again
    /// if the daemon does not start.
    static func start(
        daemon makeDaemon: (FakePushwooshServer) throws -> DaemonProcess,
        server: FakePushwooshServer? = nil,
        replies: (FakePushwooshServer) -> Void
    ) throws -> PushwooshRig {
        let server = try server ?? Self.server(replies: { _ in })
        replies(server)
        do {
            return PushwooshRig(server: server, daemon: try makeDaemon(server))
        } catch {
            server.stop()
            throw error
        }
    }

    /// Stops `first` and starts a daemon on its directory (its state and disk cache) fetching from `server`,
    /// after `replies` set what the server answers next: the second half of a restart test.
    static func restart(
        _ first: DaemonProcess, on server: FakePushwooshServer,
        replies: (FakePushwooshServer) -> Void = { $0.setDefaultReply(.hang, for: "getFeatureFlags") }
    ) throws -> PushwooshRig {
        first.stop()
        return try start(
            daemon: { try Fixtures.daemon($0, directory: first.directory) }, server: server, replies: replies)
    }

    /// A new connection to the daemon.
    func session() throws -> SocketSession { try SocketSession(socketPath: daemon.socketPath) }

    /// Stops the daemon, removes its directory, and stops the server.
    func stop() {
        daemon.cleanUp()
        server.stop()
    }
}

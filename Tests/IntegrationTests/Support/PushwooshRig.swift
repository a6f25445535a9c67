import TestSupport

/// A fake Pushwoosh and a daemon that fetches from it: the setup most Pushwoosh suites begin with.
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

    /// Starts the server, lets `replies` set what it answers (by default the checkout flag to every
    /// `getFeatureFlags`) before the daemon's first request, then starts the daemon (see `Fixtures.daemon`).
    static func start(
        featureFlags: [String: String] = [:],
        pushwoosh: [String: String] = [:],
        applicationCode: String = "ABCDE-12345",
        replies: (FakePushwooshServer) -> Void = {
            $0.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        }
    ) throws -> PushwooshRig {
        try start(
            daemon: {
                try Fixtures.daemon(
                    $0, featureFlags: featureFlags, pushwoosh: pushwoosh, applicationCode: applicationCode)
            },
            replies: replies)
    }

    /// Starts the server (or takes `server`), lets `replies` set what it answers, then starts the daemon
    /// `makeDaemon` configures for it (a suite's own configuration); the server is stopped again if the daemon
    /// does not start.
    static func start(
        daemon makeDaemon: (FakePushwooshServer) throws -> DaemonProcess,
        server: FakePushwooshServer? = nil,
        replies: (FakePushwooshServer) -> Void
    ) throws -> PushwooshRig {
        let server = try server ?? FakePushwooshServer.start()
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

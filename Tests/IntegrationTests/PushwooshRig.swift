import TestSupport

/// A fake Pushwoosh and a daemon that fetches from it: the setup most Pushwoosh suites begin with.
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
        let server = try FakePushwooshServer.start()
        replies(server)
        do {
            let daemon = try Fixtures.daemon(
                server, featureFlags: featureFlags, pushwoosh: pushwoosh, applicationCode: applicationCode)
            return PushwooshRig(server: server, daemon: daemon)
        } catch {
            server.stop()
            throw error
        }
    }

    /// Stops the daemon, removes its directory, and stops the server.
    func stop() {
        daemon.cleanUp()
        server.stop()
    }
}

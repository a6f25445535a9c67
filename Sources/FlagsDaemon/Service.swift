/// A long-running part of the daemon: `run()` returns when the service has shut down.
public protocol Service: Sendable {
    func run() async throws
}

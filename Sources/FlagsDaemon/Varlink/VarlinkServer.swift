/// The Varlink listener (docs/varlink.md): Varlink's handler on the daemon's event loop, and a task for each call
/// that may wait.
///
/// Each call's task ends with the call: a discarding task group keeps nothing of a finished child, so the daemon
/// holds no memory per call made (a task group of results kept every one until the daemon ended).
typealias VarlinkServer = FramedServer<VarlinkHandler>

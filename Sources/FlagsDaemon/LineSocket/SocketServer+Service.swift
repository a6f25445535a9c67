extension SocketServer {
    /// Stops accepting; `run()` then answers the lines already received, flushes and returns.
    func shutdownGracefully() async {
        shutdown()
    }

    var returnsAfterGracefulShutdown: Bool { true }
}

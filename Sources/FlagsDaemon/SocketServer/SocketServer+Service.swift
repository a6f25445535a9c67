extension SocketServer {
    /// Stops accepting; `run()` then answers the lines already received, flushes and returns.
    public func shutdownGracefully() async {
        shutdown()
    }

    public var returnsAfterGracefulShutdown: Bool { true }
}

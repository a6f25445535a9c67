import FlagsCore
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

extension Daemon {
    /// The OFREP service and the socket file to remove at exit; nil when OFREP is off or cannot start (then the
    /// daemon logs why and serves the line protocol alone: the local socket matters more than a second door).
    func makeOFREPServer(
        configuration: Configuration, store: FlagStore, activated: [Int32], logger: Logger, metrics: DaemonMetrics,
        evaluations: EvaluationTally
    ) -> (server: OFREPServer, ownedPath: String?)? {
        let listener: OFREPListener
        let token: [UInt8]?
        do {
            guard let opened = try OFREPListener.open(configuration, activated: activated) else { return nil }
            listener = opened
            do {
                token = try OFREPListener.token(configuration)
            } catch {
                close(listener.fd)
                if let path = listener.ownedPath { unlink(path) }
                throw error
            }
        } catch {
            logger.error("OFREP is off: \(error)")
            return nil
        }
        if listener.isTCP, token == nil {
            logger.error("OFREP is off: the listener is TCP and no TokenFile is set", ["ADDRESS": listener.address])
            close(listener.fd)
            return nil
        }
        do {
            let server = try OFREPServer(
                listenFD: listener.fd, isTCP: listener.isTCP, store: store, token: token,
                allowedOrigins: configuration.ofrepAllowedOrigins, limits: OFREPLimits(configuration), logger: logger,
                metrics: metrics, evaluations: evaluations)
            logger.notice("OFREP listening", ["ADDRESS": listener.address])
            return (server, listener.ownedPath)
        } catch {
            logger.error("OFREP is off: \(error)")
            close(listener.fd)
            if let path = listener.ownedPath { unlink(path) }
            return nil
        }
    }
}

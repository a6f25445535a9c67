import FlagsCore
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

extension Daemon {
    /// The Varlink service and the socket file to remove at exit: the socket systemd passed as `varlink`, else
    /// `[Varlink] SocketPath=`; nil when neither is there, or when the socket cannot be opened (then the daemon
    /// logs why and serves without Varlink, as it does without OFREP).
    func makeVarlinkServer(
        configuration: Configuration, store: FlagStore, controller: FlagService, activated: [Int32],
        logger: Logger
    ) -> (server: VarlinkServer, ownedPath: String?)? {
        let fd: Int32
        let ownedPath: String?
        if let passed = activated.first {
            for extra in activated.dropFirst() { close(extra) }
            do {
                try UnixSocket.setNonBlocking(passed)
            } catch {
                logger.error("Varlink is off: cannot use the activated socket: \(error)")
                close(passed)
                return nil
            }
            (fd, ownedPath) = (passed, nil)
        } else if let path = configuration.varlinkSocketPath {
            switch UnixSocket.probe(path) {
            case .inUse:
                logger.error("Varlink is off: another process serves \(path); not taking its socket")
                return nil
            case .notASocket:
                logger.error("Varlink is off: \(path) exists and is not a socket")
                return nil
            case .stale: unlink(path)
            case .absent: break
            }
            do {
                fd = try UnixSocket.listen(at: path, mode: configuration.socketMode)
            } catch {
                logger.error("Varlink is off: cannot listen on \(path): \(error.reason)")
                return nil
            }
            ownedPath = path
        } else {
            return nil
        }
        do {
            let server = try VarlinkServer(
                listenFD: fd, store: store, controller: controller, limits: ServerLimits(configuration),
                logger: logger)
            logger.notice("Varlink listening", ["SOCKET": ownedPath ?? "(socket activation)"])
            return (server, ownedPath)
        } catch {
            logger.error("Varlink is off: \(error)")
            close(fd)
            if let ownedPath { unlink(ownedPath) }
            return nil
        }
    }
}

import Dispatch
import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Stops the daemons a program started when the program gets SIGTERM or SIGINT, then exits with 128 + the signal.
///
/// The bench and soak call `stopDaemonsOnTermination()` first thing: a run stopped by a timeout or Ctrl-C then
/// leaves no daemon nor temporary directory behind. SIGKILL cannot be caught; `DaemonProcess.parentDeathLauncher`
/// covers it.
public enum TerminationSignals {
    /// The daemons started and not yet stopped, by identity.
    private static let live = Locked<[ObjectIdentifier: DaemonProcess]>([:])
    /// The dispatch sources, kept alive for the life of the program; written once, at its start.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    /// Set before a caught signal's handler stops the daemons.
    private static let terminating = Locked(false)

    static func adopt(_ daemon: DaemonProcess) {
        live.withLock { $0[ObjectIdentifier(daemon)] = daemon }
    }

    static func release(_ daemon: DaemonProcess) {
        _ = live.withLock { $0.removeValue(forKey: ObjectIdentifier(daemon)) }
    }

    /// Handles SIGTERM and SIGINT from now on: every live daemon is stopped and its directory removed.
    public static func stopDaemonsOnTermination() {
        for number in [SIGTERM, SIGINT] {
            // A program started by Foundation's Process may inherit a mask that blocks SIGTERM.
            var unblock = sigset_t()
            sigemptyset(&unblock)
            sigaddset(&unblock, number)
            pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                terminating.withLock { $0 = true }
                for daemon in live.withLock({ Array($0.values) }) { daemon.cleanUp() }
                Glibc.exit(128 + number)
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Ends the program with `status`, unless a caught signal is ending it: stopping the daemons makes the
    /// program's own work fail (its daemon is gone), and that failure's exit must not race the handler's
    /// 128 + the signal. The program then waits for the handler to end it.
    public static func exit(_ status: Int32) -> Never {
        while terminating.withLock({ $0 }) { pause() }
        Glibc.exit(status)
    }
}

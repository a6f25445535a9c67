import FlagsCore
import Foundation
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Setting up a listener's event engine fails cleanly: whichever step throws, no epoll instance or eventfd is
/// left open for the daemon's life (the engines share the process's loop and make none of their own).
@Suite(.serialized, .hangLimit) struct EventEngineSetupTests {
    /// How many descriptors of this process are of the anonymous kind `kind` (`[eventfd]`, `[eventpoll]`).
    static func count(_ kind: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == "anon_inode:" + kind
        }.count
    }

    static let attempts = 20

    /// Checks that `attempts` failed setups leave no more eventfd and epoll descriptors than before (a little
    /// room for other suites running meanwhile, far below one per attempt).
    static func expectNothingLeaks(_ failingSetup: () -> Void) {
        let eventfds = count("[eventfd]")
        let epolls = count("[eventpoll]")
        for _ in 0..<attempts { failingSetup() }
        #expect(count("[eventfd]") - eventfds < attempts / 2)
        #expect(count("[eventpoll]") - epolls < attempts / 2)
    }

    @Test func anOFREPListenerThatCannotWatchItsSocketLeavesNoDescriptorOpen() {
        Self.expectNothingLeaks {
            // -1 is no socket: epoll refuses it after the eventfd was made.
            let server = try? OFREPServer(
                listenFD: -1, isTCP: false, store: FlagStore(), token: nil, limits: OFREPLimits(),
                logger: Logger(level: .err), metrics: DaemonMetrics(),
                evaluations: EvaluationTally())
            #expect(server == nil)
        }
    }

    @Test func aHandlerThatCannotBeBuiltLeavesNoDescriptorOpen() throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        Self.expectNothingLeaks {
            let engine = try? EventEngine<LineHandler>(
                listenFD: fds[0], share: ConnectionShare(), logger: Logger(level: .err)
            ) {
                _ throws(SystemError) in throw SystemError("setup", errno: ENOMEM)
            }
            #expect(engine == nil)
        }
    }
}

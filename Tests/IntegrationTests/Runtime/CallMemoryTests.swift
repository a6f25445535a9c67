import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// No call of any kind keeps memory once it is answered (docs/reliability.md, Memory kept per call): the daemon
/// takes `count` calls of one kind, and its anonymous memory afterwards is within `bound` of what it was before.
///
/// The bound is 200 bytes a call (3.9 MiB for 20,000 calls), and at least 1 MiB: the child task each control call used to leave
/// in the servers' task groups kept 5 KB, and the refresher's cancelled sleep 420 bytes (for up to a minute).
/// Each kind is warmed first with a tenth of the count, so that what the first calls build once (a metrics
/// family, a subscription table's room, malloc's own arenas) is not counted. Under a sanitizer the count is
/// smaller and the bound is not asserted (its allocator keeps freed memory on purpose); the calls still run,
/// and the daemon's leak check at exit still applies. A debug build takes 5,000 calls of each kind: the bound is then
/// its floor, 1 MiB, so it still catches 210 bytes a call, and the suite takes a minute instead of five (the
/// growth seen over 20,000 calls was at most 540 KiB); the release binaries CI tests again take 20,000.
@Suite(.hangLimit)
struct CallMemoryTests {
    static let count = Sanitizer.isActive ? 1_000 : (DaemonProcess.isReleaseBuild ? 20_000 : 5_000)
    /// The bus's calls are round trips through dbus-daemon, several times slower: half as many.
    static let busCount = count / 2

    /// The growth allowed over `count` calls, in KiB: 200 bytes a call, and at least 1 MiB (malloc's noise).
    static func bound(_ count: Int) -> Int { max(count * 200 / 1024, 1024) }
    static let key = "new_checkout"

    static var lineCalls: [FloodCall] { FloodCall.catalogue(key: key).filter { $0.surface == .line } }
    static var busCalls: [FloodCall] { FloodCall.catalogue(key: key).filter { $0.surface == .bus } }
    static var ofrepCalls: [FloodCall] { FloodCall.catalogue(key: key).filter { $0.surface == .ofrep } }
    static var varlinkCalls: [FloodCall] { FloodCall.catalogue(key: key).filter { $0.surface == .varlink } }

    /// The daemon's memory before and after `body`, which makes the calls; fails past `bound`.
    static func expectKeepsNothing(
        _ daemon: DaemonProcess, _ label: String, count: Int = Self.count,
        sourceLocation: SourceLocation = #_sourceLocation, body: () throws -> CallFlood.Tally
    ) throws -> CallFlood.Tally {
        let pid = daemon.process.processIdentifier
        let descriptors = Measure.openDescriptors(of: pid)
        let before = try #require(Measure.settledAnonymousKiB(pid: pid, descriptors: descriptors))
        let tally = try body()
        let after = try #require(
            Measure.settledAnonymousKiB(pid: pid, descriptors: descriptors, timeout: .seconds(15)),
            "the daemon is gone")
        let grown = after - before
        print("call memory: \(label): \(tally); RssAnon \(before) -> \(after) KiB, \(grown * 1024 / count) B a call")
        #expect(
            Sanitizer.isActive || grown < bound(count),
            "\(label) kept \(grown) KiB over \(count) calls (\(grown * 1024 / count) B a call)",
            sourceLocation: sourceLocation)
        return tally
    }

    /// Warms `call`, then floods it at `address` and checks the memory; returns the tally.
    @discardableResult
    static func flood(_ call: FloodCall, on daemon: DaemonProcess, at address: String) throws -> CallFlood.Tally {
        let count = call.surface == .bus ? busCount : count
        _ = try CallFlood.run(call, count: count / 10, at: address)
        return try expectKeepsNothing(daemon, call.name, count: count) {
            try CallFlood.run(call, count: count, at: address)
        }
    }

    /// A daemon on the fixtures, its state directory on a tmpfs (a call that writes a file then costs no sync)
    /// with `extra` in its configuration.
    static func daemon(
        extra: (TemporaryDirectory) -> String = { _ in "" }, environment: [String: String] = [:]
    ) throws -> (DaemonProcess, TmpfsMount) {
        let directory = try TemporaryDirectory()
        try directory.write(LocalFlags.fileName, LocalFlags.text(Fixtures.all))
        let state = try TmpfsMount(at: directory.file("state"), size: "4m")
        do {
            let config = LocalFlags.config(
                in: directory, extra: "[Daemon]\nStateDirectory=\(state.path)\n" + extra(directory))
            return (try DaemonProcess(config: config, directory: directory, environment: environment), state)
        } catch {
            state.unmount()
            directory.remove()
            throw error
        }
    }

    @Test(arguments: lineCalls)
    func aLineCallKeepsNothingOnceAnswered(_ call: FloodCall) throws {
        let (daemon, state) = try Self.daemon()
        defer {
            daemon.cleanUp()
            state.unmount()
        }
        let tally = try Self.flood(call, on: daemon, at: daemon.socketPath)
        let refused = ["line.unknownMethod", "line.badParams"].contains(call.name)
        #expect(call.manner == .hangUp || tally.errors == (refused ? tally.answered : 0), "\(tally)")
    }

    @Test(arguments: busCalls)
    func aBusCallKeepsNothingOnceAnswered(_ call: FloodCall) throws {
        let directory = try TemporaryDirectory(prefix: "pwcm")
        defer { directory.remove() }
        let bus = try #require(try PrivateBus(directory: directory), "dbus-daemon did not start")
        defer { bus.stop() }
        let (daemon, state) = try Self.daemon(
            extra: { _ in "[DBus]\nBus=session\n" }, environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer {
            daemon.cleanUp()
            state.unmount()
        }
        try #require(try CallFlood.waitForBusName(at: bus.address), "the daemon never owned its name")
        let tally = try Self.flood(call, on: daemon, at: bus.address)
        let refused = ["bus.SetAppStateInvalid", "bus.NoSuchMethod"].contains(call.name)
        #expect(tally.errors == (refused ? tally.answered : 0), "\(tally)")
    }

    @Test(arguments: ofrepCalls)
    func anOFREPRequestKeepsNothingOnceAnswered(_ call: FloodCall) throws {
        let (daemon, state) = try Self.daemon(extra: {
            "[OFREP]\nListenAddress=\($0.file("ofrep.sock"))\nRequestRate=0\n"
        })
        defer {
            daemon.cleanUp()
            state.unmount()
        }
        let tally = try Self.flood(call, on: daemon, at: daemon.directory.file("ofrep.sock"))
        let refused = ["ofrep.missing", "ofrep.badRequest", "ofrep.notFound"].contains(call.name)
        #expect(call.manner == .hangUp || tally.errors == (refused ? tally.answered : 0), "\(tally)")
    }

    @Test(arguments: varlinkCalls)
    func aVarlinkCallKeepsNothingOnceAnswered(_ call: FloodCall) throws {
        let (daemon, state) = try Self.daemon(extra: { "[Varlink]\nSocketPath=\($0.file("varlink.sock"))\n" })
        defer {
            daemon.cleanUp()
            state.unmount()
        }
        let tally = try Self.flood(call, on: daemon, at: daemon.directory.file("varlink.sock"))
        let refused = ["varlink.InvalidParameter", "varlink.MethodNotFound"].contains(call.name)
        #expect(call.manner == .hangUp || tally.errors == (refused ? tally.answered : 0), "\(tally)")
    }
}

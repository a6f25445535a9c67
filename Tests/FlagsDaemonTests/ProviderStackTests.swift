import FlagsCore
import FlagsProtocol
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// The provider stack on its own: what it serves at its start, what it says it is (the identity a reload compares,
/// its `status`), its retirement, and how it finds its HWID and token. No request leaves the process: the
/// Pushwoosh stacks here have an address that R16 refuses.
@Suite(.hangLimit) struct ProviderStackTests {
    /// A Pushwoosh configuration whose `ServerURL` is refused (R16), so that the stack never sends.
    static func refusedPushwoosh(_ code: String = "ABCDE-12345", user: String? = nil) -> Configuration {
        var configuration = Configuration()
        configuration.applicationCode = code
        configuration.serverURL = "http://127.0.0.1:1/json/1.2/"
        configuration.hwid = "hwid-1"
        configuration.userID = user
        return configuration
    }

    @Test func aLocalFileStackServesTheFileAtItsStartAndSaysSo() async throws {
        let rig = try LocalStackRig()
        defer { rig.remove() }
        #expect(rig.servedKeys.isEmpty)
        await rig.start()
        #expect(rig.servedKeys == ["a", "b"])
        let stack = rig.stacks.current
        #expect(stack.identity == "file")
        let status = stack.status(store: rig.store, snapshot: rig.store.current, connections: 0, subscriptions: 0)
        #expect(status.source == "file" && status.flags == 2 && status.applicationCode == nil)
        #expect(!stack.statusLine(store: rig.store).isEmpty)
    }

    @Test func theIdentityAReloadComparesNamesTheSourceTheApplicationAndTheUser() throws {
        let rig = try LocalStackRig()
        defer { rig.remove() }
        let first = rig.stack(Self.refusedPushwoosh())
        #expect(first.identity == "pushwoosh ABCDE-12345 hwid-1")
        #expect(rig.stack(Self.refusedPushwoosh("FGHIJ-67890")).identity != first.identity)
        #expect(rig.stack(Self.refusedPushwoosh(user: "alice")).identity == "pushwoosh ABCDE-12345 alice")
        #expect(rig.stacks.current.identity != first.identity)
    }

    @Test func aStackWhoseAddressIsRefusedNeverFetchesAndSaysWhy() async throws {
        let rig = try LocalStackRig()
        defer { rig.remove() }
        let stack = rig.stack(Self.refusedPushwoosh())
        await stack.start()
        guard case .failure(let error) = await stack.refresher.refresh() else {
            Issue.record("a refused address fetched")
            return
        }
        #expect(error.reason.contains("R16"), "\(error.reason)")
        let status = stack.status(store: rig.store, snapshot: rig.store.current, connections: 0, subscriptions: 0)
        #expect(status.source == "pushwoosh" && status.applicationCode == "ABCDE-12345")
        #expect(status.problem?.contains("json/1.3/") == true, "\(String(describing: status.problem))")
    }

    @Test func aRetiredStackNoLongerChangesTheServedFlags() async throws {
        let rig = try LocalStackRig()
        defer { rig.remove() }
        await rig.start()
        let stack = rig.stacks.current
        #expect(!stack.isRetired)
        await stack.retire()
        #expect(stack.isRetired)
        try rig.directory.write("flags.json", #"{"flags":[]}"#)
        _ = await stack.refresher.refresh()
        #expect(rig.servedKeys == ["a", "b"])
    }

    @Test func aConfiguredHWIDWinsAndAnyOtherIsStableAcrossStarts() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let logger = Logger(level: .err)
        var configuration = Configuration()
        configuration.hwid = "configured"
        #expect(ProviderStack.resolveHWID(configuration, stateDirectory: state, logger: logger) == "configured")
        configuration.hwid = nil
        let first = ProviderStack.resolveHWID(configuration, stateDirectory: state, logger: logger)
        #expect(first.count == 32)
        #expect(ProviderStack.resolveHWID(configuration, stateDirectory: state, logger: logger) == first)
    }

    @Test func theTokenIsReadTrimmedAndAMissingOrEmptyFileSendsNone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let logger = Logger(level: .err)
        var configuration = Configuration()
        try directory.write("token", "  s3cr3t\n")
        configuration.apiTokenFile = directory.file("token")
        #expect(ProviderStack.readAPIToken(configuration, environment: [:], logger: logger) == "s3cr3t")
        try directory.write("token", "\n")
        #expect(ProviderStack.readAPIToken(configuration, environment: [:], logger: logger) == nil)
        configuration.apiTokenFile = directory.file("missing")
        #expect(ProviderStack.readAPIToken(configuration, environment: [:], logger: logger) == nil)
    }
}

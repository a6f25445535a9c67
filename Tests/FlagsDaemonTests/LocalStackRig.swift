import FlagsCore
import FlagsProtocol
import TestSupport
import UnixIO

@testable import FlagsDaemon

/// The daemon's rooms above the socket, assembled in the test process on a local flags file: a store, a state
/// directory, the provider stack and its gate, the overrides and the controller. No socket, no network, no
/// process: what the router, the controller, the stack and the reloader decide is seen in what they return and
/// in the store.
final class LocalStackRig: Sendable {
    /// `a` enabled (rule r1), `b` disabled (rule r2): what `flags.json` holds at the start.
    static let flagsText =
        #"{"flags":[{"key":"a","enabled":true,"rule_id":"r1"},"#
        + #"{"key":"b","enabled":false,"rule_id":"r2"}]}"#

    let directory: TemporaryDirectory
    let store = FlagStore()
    let state: StateDirectory
    let logger = Logger(level: .err)
    let metrics = DaemonMetrics()
    let configuration: Configuration
    let stacks: StackGate
    let overrides: LocalOverrides

    /// Writes `flags.json` (`flags` as its text) and builds the stack for it; `start()` serves it.
    init(flags: String = LocalStackRig.flagsText) throws {
        directory = try TemporaryDirectory()
        try directory.write("flags.json", flags)
        state = StateDirectory(path: directory.path)
        configuration = Self.configuration(file: directory.file("flags.json"))
        stacks = StackGate(
            ProviderStack(
                configuration: configuration, environment: [:], store: store, stateDirectory: state, logger: logger,
                metrics: metrics))
        overrides = LocalOverrides(store: store, directory: state, logger: logger)
    }

    /// A local-file configuration for `file`, with a fixed HWID (no machine id asked).
    static func configuration(file: String) -> Configuration {
        var configuration = Configuration()
        configuration.localFlagsFile = file
        configuration.hwid = "hwid-1"
        return configuration
    }

    /// A second stack on this rig's store and state directory, for `configuration`.
    func stack(_ configuration: Configuration) -> ProviderStack {
        ProviderStack(
            configuration: configuration, environment: [:], store: store, stateDirectory: state, logger: logger,
            metrics: metrics)
    }

    /// Serves the flags file, as the daemon does before it opens its socket.
    func start() async {
        await stacks.current.start()
    }

    /// The flag service over this rig's stacks, under `access`; `reload` answers the `reload` method.
    func controller(
        access: AccessPolicy = AccessPolicy(controlGroups: nil),
        reload: @escaping @Sendable () async -> Result<Void, ConfigurationErrors> = { .success(()) }
    ) -> FlagService {
        FlagService(
            store: store, stacks: stacks, reload: reload, overrides: overrides,
            policy: CallPolicy(access: access, logger: logger), metrics: metrics)
    }

    /// The keys the store serves, sorted.
    var servedKeys: [String] { store.current.flags.sorted.map(\.key) }

    func remove() { directory.remove() }
}

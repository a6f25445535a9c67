import FlagsCore
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// Reload semantics on the reloader itself, in the test process on local flags files: a broken configuration
/// changes nothing, a reload that keeps the source keeps the stack, one that changes it retires the old stack and
/// serves what a restart would, and nothing is reloaded once the daemon stops.
@Suite(.hangLimit) struct ReloaderTests {
    /// A reloader on `rig`'s store and state directory whose configuration files read as `next` says.
    final class Reloading: Sendable {
        let rig: LocalStackRig
        let next: Locked<Result<Configuration, ConfigurationErrors>>
        let reloader: Reloader

        init() async throws {
            rig = try LocalStackRig()
            let next = Locked<Result<Configuration, ConfigurationErrors>>(.success(rig.configuration))
            self.next = next
            reloader = Reloader(
                configuration: rig.configuration, load: { next.withLock { $0 } }, environment: [:], store: rig.store,
                stateDirectory: rig.state, logger: rig.logger, metrics: rig.metrics)
            await reloader.prepare()
        }

        deinit { rig.remove() }

        /// Makes the next reload read `configuration`.
        func loads(_ configuration: Configuration) { next.withLock { $0 = .success(configuration) } }

        /// Runs the reloader as the daemon's service group does while `body` runs, then cancels it.
        func running<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
            let service = Task { await reloader.run() }
            defer { service.cancel() }
            let result = try await body()
            service.cancel()
            await service.value
            return result
        }
    }

    static let broken = ConfigurationErrors([ConfigurationProblem(file: "x.conf", line: 2, message: "bad")])

    @Test func theFirstStackServesTheFileBeforeAnyReload() async throws {
        let reloading = try await Reloading()
        #expect(reloading.rig.servedKeys == ["a", "b"])
    }

    @Test func aBrokenConfigurationChangesNothingAndReturnsEveryProblem() async throws {
        let reloading = try await Reloading()
        let before = reloading.reloader.stacks.current
        reloading.next.withLock { $0 = .failure(Self.broken) }
        guard case .failure(let errors) = await reloading.reloader.reload() else {
            Issue.record("a broken configuration was applied")
            return
        }
        #expect(errors.problems == Self.broken.problems)
        #expect(reloading.reloader.stacks.current === before && !before.isRetired)
        #expect(await reloading.reloader.configuration == reloading.rig.configuration)
    }

    @Test func aReloadThatKeepsTheSourceKeepsTheStackAndItsSession() async throws {
        let reloading = try await Reloading()
        let before = reloading.reloader.stacks.current
        let session = before.refresher.status.withLock(\.session)
        var changed = reloading.rig.configuration
        changed.refreshInterval = .seconds(60)
        changed.requestTimeout = .seconds(3)
        reloading.loads(changed)
        _ = try await reloading.reloader.reload().get()
        #expect(reloading.reloader.stacks.current === before && !before.isRetired)
        #expect(before.refresher.status.withLock(\.session) == session)
        #expect(await reloading.reloader.configuration == changed)
    }

    @Test func aReloadThatChangesTheSourceRetiresTheStackAndServesWhatARestartWould() async throws {
        let reloading = try await Reloading()
        try reloading.rig.directory.write("other.json", #"{"flags":[{"key":"c","enabled":true,"rule_id":"r3"}]}"#)
        let before = reloading.reloader.stacks.current
        let other = LocalStackRig.configuration(file: reloading.rig.directory.file("other.json"))
        reloading.loads(other)
        try await reloading.running { try await reloading.reloader.reload().get() }
        let after = reloading.reloader.stacks.current
        #expect(after !== before && before.isRetired && !after.isRetired)
        #expect(after.configuration.localFlagsFile == other.localFlagsFile)
        #expect(reloading.rig.servedKeys == ["c"])
        // The retired stack's file no longer reaches the store.
        try reloading.rig.directory.write("flags.json", #"{"flags":[]}"#)
        _ = await before.refresher.refresh()
        #expect(reloading.rig.servedKeys == ["c"])
    }

    @Test func nothingIsReloadedOnceTheDaemonStops() async throws {
        let reloading = try await Reloading()
        let before = reloading.reloader.stacks.current
        await reloading.reloader.shutdownGracefully()
        #expect(before.isRetired)
        var changed = reloading.rig.configuration
        changed.refreshInterval = .seconds(60)
        reloading.loads(changed)
        guard case .failure(let errors) = await reloading.reloader.reload() else {
            Issue.record("a stopped reloader reloaded")
            return
        }
        #expect(errors.problems.first?.message.contains("stopping") == true)
        #expect(await reloading.reloader.configuration == reloading.rig.configuration)
    }

    @Test func theSourceIsWhereAndForWhomFlagsComeFromNotItsTimers() {
        let base = ProviderStackTests.refusedPushwoosh()
        func changed(_ change: (inout Configuration) -> Void) -> Bool {
            var new = base
            change(&new)
            return Reloader.sourceChanged(base, new)
        }
        #expect(!changed { $0.refreshInterval = .seconds(5) })
        #expect(!changed { $0.requestTimeout = .seconds(1) })
        #expect(!changed { $0.cacheMaxAge = .seconds(5) })
        #expect(changed { $0.applicationCode = "FGHIJ-67890" })
        #expect(changed { $0.serverURL = nil })
        #expect(changed { $0.userID = "alice" })
        #expect(changed { $0.hwid = "hwid-2" })
        #expect(changed { $0.apiTokenFile = "/run/token" })
        #expect(changed { $0.localFlagsFile = "/tmp/flags.json" })
        #expect(changed { $0.caFile = "/etc/ca.pem" })
    }
}

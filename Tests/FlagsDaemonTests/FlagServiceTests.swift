import FlagsCore
import FlagsProtocol
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// The control calls carried out on the stack in effect, with their answers and errors as the wire carries them,
/// on a local flags file in the test process.
@Suite(.hangLimit) struct FlagServiceTests {
    static let other = #"{"flags":[{"key":"c","enabled":true,"rule_id":"r3"}]}"#

    @Test func reloadAnswersEmptyOrEveryProblemAsInvalidParams() async throws {
        let rig = try LocalStackRig()
        defer { rig.remove() }
        let succeeding = rig.controller(reload: { .success(()) })
        #expect((try? await succeeding.reload().get()) != nil)
        let problems = ConfigurationErrors([
            ConfigurationProblem(file: "/etc/pwflagsd.conf", line: 3, message: "unknown key Foo"),
            ConfigurationProblem(file: "/etc/pwflagsd.conf", line: 7, message: "bad duration"),
        ])
        let failing = rig.controller(reload: { .failure(problems) })
        guard case .failure(let error) = await failing.reload() else {
            Issue.record("a refused reload answered success")
            return
        }
        #expect(error.code == RPCError.invalidParamsCode)
        #expect(error.data?["problems"]?.arrayValue?.count == 2)
    }

    @Test func refreshAnswersTheFlagsInEffectAfterIt() async throws {
        let rig = try LocalStackRig()
        defer { rig.remove() }
        await rig.start()
        let controller = rig.controller()
        try rig.directory.write("flags.json", Self.other)
        let listing = try await controller.refresh().get()
        #expect(listing.flags.map(\.key) == ["c"])
        #expect(listing.revision == rig.store.current.revision)
        #expect(rig.servedKeys == ["c"])
    }

    @Test func controlCallsAnswerWithTheirOwnResults() async throws {
        let rig = try LocalStackRig()
        defer { rig.remove() }
        await rig.start()
        let controller = rig.controller()
        let user = try await controller.setUserId("alice").get()
        #expect(user.userId == "alice")
        #expect(rig.stacks.current.refresher.status.withLock(\.userId) == "alice")
        // The local file has no sessions to start and no push registration to refresh on.
        #expect(await controller.setAppState(.foreground).sessionStarted == false)
        #expect(await controller.pushRegistered().refreshStarted == false)
        #expect(await controller.logImpression(key: "nope") == .noFlag)
    }

    @Test func aCallDuringASwapGoesToTheStackThatServesAfterIt() async throws {
        let rig = try LocalStackRig()
        defer { rig.remove() }
        await rig.start()
        let controller = rig.controller()
        try rig.directory.write("other.json", Self.other)
        rig.stacks.close()
        let old = rig.stacks.current
        async let answer = controller.refresh()
        await old.retire()
        let next = rig.stack(LocalStackRig.configuration(file: rig.directory.file("other.json")))
        await next.start()
        rig.stacks.open(with: next)
        let listing = try await answer.get()
        #expect(listing.flags.map(\.key) == ["c"])
    }

    @Test func aCallOnARetiredStackWithNoSuccessorFailsWithStatusZero() async throws {
        let rig = try LocalStackRig()
        defer { rig.remove() }
        await rig.start()
        let controller = rig.controller()
        // The daemon stopping: the stack is retired and no other follows.
        await rig.stacks.current.retire()
        guard case .failure(let error) = await controller.refresh() else {
            Issue.record("a retired stack refreshed")
            return
        }
        #expect(error.code == RPCError.refreshFailedCode)
        #expect(error.data?["status"] == 0)
    }

    @Test func statusAndExplainReadTheStackInEffectWithoutWaiting() async throws {
        let rig = try LocalStackRig()
        defer { rig.remove() }
        await rig.start()
        let controller = rig.controller()
        // A swap in progress does not hold reads back.
        rig.stacks.close()
        let status = controller.status(snapshot: rig.store.current, connections: 3, subscriptions: 2)
        #expect(status.source == "file" && status.flags == 2)
        #expect(status.connections == 3 && status.subscriptions == 2)
        let explained = controller.explain(key: "a", snapshot: rig.store.current, subscriptions: 1)
        var bytes: [UInt8] = []
        explained.write(to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self).contains("r1"))
        rig.stacks.open(with: rig.stacks.current)
    }
}

import FlagsCore
import FlagsProtocol
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// The one policy every surface asks: who may make a control call or `reload`, and how often a user may write
/// the state directory, whichever surface the calls come through.
@Suite(.hangLimit) struct CallPolicyTests {
    /// The daemon's own user is 4000; group 2000 is `ControlGroups`.
    static func policy(controlGroups: Set<UInt32>? = [2000]) -> CallPolicy {
        CallPolicy(access: AccessPolicy(controlGroups: controlGroups, ownUID: 4000), logger: Logger(level: .err))
    }

    static func caller(_ surface: Caller.Surface, uid: UInt32 = 1000, groups: [UInt32] = [2000]) -> Caller {
        Caller(surface: surface, uid: uid, gid: 1000) { groups }
    }

    @Test func readsAreNotJudgedAndTakeNoLookAtTheCaller() {
        for call: Call in [.get(key: "a"), .getAll, .isEnabled(key: "a", default: false), .refresh, .status] {
            #expect(!CallPolicy.applies(to: call))
            #expect(Self.policy().refusal(of: call, from: Self.caller(.line, groups: [])) == nil)
        }
    }

    @Test func controlCallsFollowControlGroupsOnEverySurface() {
        let policy = Self.policy()
        for surface in [Caller.Surface.line, .varlink, .bus] {
            let refused = policy.refusal(of: .setUserId("alice"), from: Self.caller(surface, groups: []))
            #expect(refused == .notPermitted("setUserId"))
            #expect(policy.refusal(of: .setUserId("alice"), from: Self.caller(surface)) == nil)
        }
    }

    @Test func reloadIsForRootAndTheDaemonsUserOnly() {
        let policy = Self.policy(controlGroups: nil)
        #expect(policy.refusal(of: .reload, from: Self.caller(.line)) == .notPermitted("reload", privileged: true))
        #expect(policy.refusal(of: .reload, from: Self.caller(.varlink, uid: 4000)) == nil)
        #expect(policy.refusal(of: .reload, from: Self.caller(.bus, uid: 0)) == nil)
    }

    @Test func oneUsersStateWritesShareOneRateAcrossSurfaces() {
        let policy = Self.policy()
        let surfaces: [Caller.Surface] = [.line, .varlink, .bus]
        var passed = 0
        // All at one instant: the bucket refills nothing meanwhile.
        for index in 0..<Int(StateWriteRate.burst) * 3 {
            let caller = Self.caller(surfaces[index % 3])
            if policy.refusal(of: .setUserId("u\(index)"), from: caller, now: 1_000_000_000) == nil { passed += 1 }
        }
        #expect(passed == Int(StateWriteRate.burst))
        let refused = policy.refusal(of: .clearOverride(key: nil), from: Self.caller(.bus), now: 1_000_000_000)
        #expect(refused?.code == RPCError.tooManyStateChangesCode)
        // Another user has a bucket of its own, and the daemon's own user none at all.
        #expect(policy.refusal(of: .setUserId("b"), from: Self.caller(.line, uid: 1001), now: 1_000_000_000) == nil)
        #expect(policy.refusal(of: .setUserId("c"), from: Self.caller(.bus, uid: 4000), now: 1_000_000_000) == nil)
    }

    @Test func aRefusedCallTakesNothingOfTheRate() {
        let policy = Self.policy()
        for _ in 0..<100 {
            _ = policy.refusal(of: .setUserId("x"), from: Self.caller(.line, groups: []), now: 1_000_000_000)
        }
        #expect(policy.refusal(of: .setUserId("y"), from: Self.caller(.line), now: 1_000_000_000) == nil)
    }

    @Test func aReloadChangesControlGroupsForEverySurfaceAtOnce() {
        let policy = Self.policy()
        #expect(policy.refusal(of: .setAppState(.foreground), from: Self.caller(.varlink, groups: [3000])) != nil)
        policy.access = AccessPolicy(controlGroups: [3000], ownUID: 4000)
        #expect(policy.refusal(of: .setAppState(.foreground), from: Self.caller(.varlink, groups: [3000])) == nil)
        #expect(policy.refusal(of: .setAppState(.foreground), from: Self.caller(.bus, groups: [2000])) != nil)
    }
}

import FlagsCore
import Foundation
import PushwooshAPI
import TestSupport
import Testing

@testable import FlagsDaemon

/// Talking to Pushwoosh (docs/behaviour.md): a `base_url` is taken from any reply in Pushwoosh's envelope, failed ones
/// included; JSON that is not the envelope sends the device back to the default address; a moved address that
/// has failed for longer than `CacheMaxAge` is dropped for the default. Time comes from a hand-moved clock.
@Suite(.hangLimit) struct BaseAddressRecoveryTests {
    static let code = "ABCDE-12345"
    static let initial = URL(string: "https://ABCDE-12345.api.pushwoosh.com/json/1.3/")
    static let moved = URL(string: "https://eu.api.pushwoosh.example/json/1.3/")

    struct Setup {
        let directory: TemporaryDirectory
        let state: StateDirectory
        let clock = ManualClock()

        init() throws {
            directory = try TemporaryDirectory()
            state = StateDirectory(path: directory.path)
        }

        func address(follows: Bool = true, cacheMaxAge: Duration = .seconds(3600)) throws -> BaseAddress {
            BaseAddress(
                initial: try #require(BaseAddressRecoveryTests.initial), applicationCode: BaseAddressRecoveryTests.code,
                follows: follows, stateDirectory: state, logger: Logger(level: .err), cacheMaxAge: cacheMaxAge,
                clock: clock)
        }
    }

    static func failure(status: Int = 503, _ body: String) -> Result<URL?, PushwooshError> {
        .failure(.httpStatus(status, body: Array(body.utf8)))
    }

    static let unreachable: Result<URL?, PushwooshError> = .failure(.noReply("refused", kind: .connect))

    @Test("A failed reply in Pushwoosh's envelope moves the address, and the move is kept")
    func failedEnvelopeMoves() throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        let address = try setup.address()
        let initial = try #require(Self.initial)
        let moved = try #require(Self.moved)
        address.observe(
            Self.failure(#"{"status_code":210,"status_message":"Wrong host","base_url":"\#(moved)"}"#), from: initial)
        #expect(address.current == moved)
        #expect(try setup.address().current == moved)
        let kept = try JSONValue(parsing: try #require(setup.state.read(BaseAddress.file)))
        #expect(kept["goodAt"]?.numberValue == setup.clock.wallNow().rounded(.down))
        #expect(kept["baseURL"]?.stringValue == moved.absoluteString)
    }

    @Test("JSON that is not the envelope sends a moved device back to the default address and forgets the move")
    func nonEnvelopeResets() throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        let address = try setup.address()
        let moved = try #require(Self.moved)
        address.move(to: moved)
        address.observe(Self.failure(status: 502, #"{"message":"Bad gateway"}"#), from: moved)
        #expect(address.current == Self.initial)
        #expect(setup.state.read(BaseAddress.file) == nil)
    }

    @Test("A body that is not JSON neither moves nor resets")
    func htmlSaysNothing() throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        let address = try setup.address()
        let moved = try #require(Self.moved)
        address.move(to: moved)
        address.observe(Self.failure(status: 502, "<html>Bad gateway</html>"), from: moved)
        #expect(address.current == moved)
    }

    @Test("A moved address is dropped when it fails after CacheMaxAge without a success, not before")
    func failingLongerThanCacheMaxAgeDrops() throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        let address = try setup.address(cacheMaxAge: .seconds(600))
        let moved = try #require(Self.moved)
        address.move(to: moved)
        setup.clock.advance(by: 300)
        address.observe(Self.unreachable, from: moved)
        #expect(address.current == moved)
        // A success restarts the count.
        address.observe(.success(nil), from: moved)
        setup.clock.advance(by: 599)
        address.observe(Self.unreachable, from: moved)
        #expect(address.current == moved)
        setup.clock.advance(by: 2)
        address.observe(Self.unreachable, from: moved)
        #expect(address.current == Self.initial)
        #expect(setup.state.read(BaseAddress.file) == nil)
    }

    @Test("The time of the last success survives a restart: a daemon started later drops a long-failed address")
    func keptGoodTimeSurvivesARestart() throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        let moved = try #require(Self.moved)
        try setup.address(cacheMaxAge: .seconds(600)).move(to: moved)
        // Powered off for an hour: the boot clock starts again, the wall clock went on.
        setup.clock.setWall(by: 3600)
        let restarted = try setup.address(cacheMaxAge: .seconds(600))
        #expect(restarted.current == moved)
        restarted.observe(Self.unreachable, from: moved)
        #expect(restarted.current == Self.initial)
    }

    @Test("A shorter CacheMaxAge from a reload applies at once")
    func reloadedCacheMaxAgeApplies() throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        let address = try setup.address(cacheMaxAge: .seconds(3600))
        let moved = try #require(Self.moved)
        address.move(to: moved)
        setup.clock.advance(by: 120)
        address.update(cacheMaxAge: .seconds(60))
        address.observe(Self.unreachable, from: moved)
        #expect(address.current == Self.initial)
    }

    @Test("A request that never left or was cancelled does not count as a failure of the address")
    func unsentRequestsDoNotCount() throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        let address = try setup.address(cacheMaxAge: .seconds(60))
        let moved = try #require(Self.moved)
        address.move(to: moved)
        setup.clock.advance(by: 120)
        address.observe(.failure(.notSent("held")), from: moved)
        address.observe(.failure(.noReply("reload", kind: .cancelled)), from: moved)
        #expect(address.current == moved)
    }

    @Test("With ServerURL set, neither a failed envelope nor foreign JSON nor failures change the address")
    func serverURLIgnoresEverything() throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        let address = try setup.address(follows: false, cacheMaxAge: .seconds(1))
        let initial = try #require(Self.initial)
        let moved = try #require(Self.moved)
        address.observe(Self.failure(#"{"status_code":210,"base_url":"\#(moved)"}"#), from: initial)
        setup.clock.advance(by: 10)
        address.observe(Self.unreachable, from: initial)
        address.observe(Self.failure(#"{"message":"proxy"}"#), from: initial)
        #expect(address.current == initial)
        #expect(setup.state.read(BaseAddress.file) == nil)
    }

    @Test("An http base_url in a failed envelope is not followed")
    func plainHTTPFromFailedEnvelopeIsIgnored() throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        let address = try setup.address()
        let initial = try #require(Self.initial)
        address.observe(
            Self.failure(#"{"status_code":210,"base_url":"http://eu.api.pushwoosh.example/json/1.3/"}"#),
            from: initial)
        #expect(address.current == initial)
        #expect(setup.state.read(BaseAddress.file) == nil)
    }

    @Test("A successful reply that names the default address moves back there and forgets the move")
    func successNamingTheDefaultGoesBack() throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        let address = try setup.address()
        let initial = try #require(Self.initial)
        let moved = try #require(Self.moved)
        address.observe(.success(moved), from: initial)
        #expect(setup.state.read(BaseAddress.file) != nil)
        address.observe(.success(initial), from: moved)
        #expect(address.current == initial)
        #expect(setup.state.read(BaseAddress.file) == nil)
    }

    @Test("A reply from an address already left changes nothing")
    func staleReplyIsIgnored() throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        let address = try setup.address()
        let initial = try #require(Self.initial)
        let moved = try #require(Self.moved)
        address.move(to: moved)
        address.observe(Self.failure(#"{"message":"not pushwoosh"}"#), from: initial)
        #expect(address.current == moved)
    }
}

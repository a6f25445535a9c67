import FlagsCore
import Foundation
import TestSupport
import Testing

@testable import FlagsDaemon

/// Talking to Pushwoosh (docs/behaviour.md): `base_url` moves later calls, is kept in the state directory, and is
/// ignored with `ServerURL`; a move goes only to https, and a kept address serves only the application it came with.
@Suite(.hangLimit) struct BaseAddressTests {
    static let code = "ABCDE-12345"
    static let initial = URL(string: "https://ABCDE-12345.api.pushwoosh.com/json/1.3/")
    static let moved = URL(string: "https://eu.api.pushwoosh.example/json/1.3/")

    static func address(
        _ state: StateDirectory, code: String = code, initial: URL? = initial, follows: Bool = true
    ) throws -> BaseAddress {
        BaseAddress(
            initial: try #require(initial), applicationCode: code, follows: follows, stateDirectory: state,
            logger: Logger(level: .err))
    }

    @Test("Without ServerURL a base_url moves the address and survives a restart")
    func followsAndKeepsBaseURL() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let moved = try #require(Self.moved)
        let first = try Self.address(state)
        #expect(first.current == Self.initial)
        first.move(to: moved)
        #expect(first.current == moved)
        #expect(try Self.address(state).current == moved)
    }

    @Test("With ServerURL set, base_url is ignored and nothing is kept")
    func serverURLWins() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let address = try Self.address(state, follows: false)
        address.move(to: try #require(Self.moved))
        #expect(address.current == Self.initial)
        #expect(state.read(BaseAddress.file) == nil)
    }

    @Test("A base_url that does not end with json/1.3/ (R16) is never followed")
    func unacceptableBaseURLIsIgnored() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let address = try Self.address(state)
        address.move(to: try #require(URL(string: "https://elsewhere.example/api/")))
        #expect(address.current == Self.initial)
    }

    @Test("A plain http base_url is never followed nor kept: only https moves the daemon")
    func plainHTTPMoveIsIgnored() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let address = try Self.address(state)
        address.move(to: try #require(URL(string: "http://eu.api.pushwoosh.example/json/1.3/")))
        #expect(address.current == Self.initial)
        #expect(state.read(BaseAddress.file) == nil)
    }

    @Test("A kept address serves only the application it came with")
    func keptAddressIsBoundToItsApplication() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let moved = try #require(Self.moved)
        try Self.address(state).move(to: moved)
        let otherInitial = URL(string: "https://FGHIJ-67890.api.pushwoosh.com/json/1.3/")
        let other = try Self.address(state, code: "FGHIJ-67890", initial: otherInitial)
        #expect(other.current == otherInitial)
        // The other application's start does not erase the first one's move.
        #expect(try Self.address(state).current == moved)
    }

    @Test(
        "A kept address that is no longer acceptable is not used at start",
        arguments: [
            "not a url",
            // An address kept before moves were bound to their application: whose it is cannot be told.
            "https://eu.api.pushwoosh.example/json/1.3/",
            #"{"applicationCode":"ABCDE-12345","baseURL":"http://eu.api.pushwoosh.example/json/1.3/"}"#,
            #"{"applicationCode":"ABCDE-12345","baseURL":"https://eu.api.pushwoosh.example/"}"#,
            #"{"applicationCode":"ABCDE-12345"}"#,
        ])
    func unusableKeptAddressIsIgnored(kept: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        try state.writeAtomically(BaseAddress.file, Array(kept.utf8))
        #expect(try Self.address(state).current == Self.initial)
    }
}

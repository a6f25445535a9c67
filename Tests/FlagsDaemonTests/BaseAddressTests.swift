import FlagsCore
import Foundation
import TestSupport
import Testing

@testable import FlagsDaemon

/// UPSTREAM.md: `base_url` moves later calls, is kept in the state directory, and is ignored with `ServerURL`.
@Suite struct BaseAddressTests {
    static let initial = URL(string: "https://ABCDE-12345.api.pushwoosh.com/json/1.3/")
    static let moved = URL(string: "https://eu.api.pushwoosh.example/json/1.3/")

    @Test("Without ServerURL a base_url moves the address and survives a restart")
    func followsAndKeepsBaseURL() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let initial = try #require(Self.initial)
        let moved = try #require(Self.moved)
        let first = BaseAddress(initial: initial, follows: true, stateDirectory: state, logger: Logger(level: .err))
        #expect(first.current == initial)
        first.move(to: moved)
        #expect(first.current == moved)
        let restarted = BaseAddress(initial: initial, follows: true, stateDirectory: state, logger: Logger(level: .err))
        #expect(restarted.current == moved)
    }

    @Test("With ServerURL set, base_url is ignored and nothing is kept")
    func serverURLWins() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let initial = try #require(Self.initial)
        let address = BaseAddress(initial: initial, follows: false, stateDirectory: state, logger: Logger(level: .err))
        address.move(to: try #require(Self.moved))
        #expect(address.current == initial)
        #expect(state.read(BaseAddress.file) == nil)
    }

    @Test("A base_url that does not end with json/1.3/ (R16) is never followed")
    func unacceptableBaseURLIsIgnored() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let initial = try #require(Self.initial)
        let address = BaseAddress(initial: initial, follows: true, stateDirectory: state, logger: Logger(level: .err))
        address.move(to: try #require(URL(string: "https://elsewhere.example/api/")))
        #expect(address.current == initial)
    }

    @Test("A kept address that is no longer acceptable is not used at start")
    func corruptKeptAddressIsIgnored() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        try state.writeAtomically(BaseAddress.file, Array("not a url".utf8))
        let initial = try #require(Self.initial)
        let address = BaseAddress(initial: initial, follows: true, stateDirectory: state, logger: Logger(level: .err))
        #expect(address.current == initial)
    }
}

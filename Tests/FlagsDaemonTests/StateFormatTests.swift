import FlagsCore
import FlagsProtocol
import Foundation
import PushwooshAPI
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// The state directory across versions (docs/operations.md, Rolling back): this daemon reads what 0.1.0 (commit
/// 9b88740, which knew no `format` but the cache's) kept, writes what 0.1.0 still reads, and sets aside, unread and
/// logged, a file a newer version wrote in a format it does not know, keeping the user id.
@Suite(.hangLimit) struct StateFormatTests {
    static let code = "ABCDE-12345"

    /// The cache as 0.1.0 writes it, byte for byte: format 2, fetched 60 s before `ManualClock`'s start in the boot
    /// `boot-a`, for the user alice. `format` is the number put in.
    static func cacheText(format: Int) -> String {
        #"{"applicationCode":"ABCDE-12345","bootId":"boot-a","bootTime":940,"fetchedAt":1799999940,"format":"#
            + "\(format)"
            + #","response":{"flags":[{"enabled":true,"key":"new_checkout","properties":{"button_color":"green"},"#
            + #""rule_id":"r_1"}],"partial":false},"userId":"alice"}"# + "\n"
    }

    /// The log lines a daemon wrote, with their fields.
    final class Lines: Sendable {
        let lines = Locked<[String]>([])

        var logger: Logger {
            Logger(level: .debug) { [lines] _, message, fields in
                lines.withLock { $0.append(([message] + fields.map { "\($0.0)=\($0.1)" }).joined(separator: " ")) }
            }
        }

        func count(_ text: String) -> Int { lines.withLock { $0.filter { $0.contains(text) }.count } }
    }

    /// A Pushwoosh source in `directory` on a clock at boot 1000 of `boot-a`: what a start or a reload builds.
    struct Start {
        let store = FlagStore()
        let fetcher = ScriptedFetcher()
        let clock = ManualClock()
        let lines = Lines()
        let refresher: Refresher

        init(_ directory: TemporaryDirectory) {
            var configuration = Configuration()
            configuration.applicationCode = StateFormatTests.code
            configuration.refreshSpread = .zero
            configuration.sessionStartDelay = .zero
            fetcher.answer(
                .success(
                    FeatureFlagsResponse(flags: [Flag(key: "fetched", isEnabled: true, ruleId: "r_2", properties: [:])])
                ))
            let state = StateDirectory(path: directory.path)
            refresher = Refresher(
                provider: PushwooshProvider(
                    fetcher: fetcher, applicationCode: configuration.applicationCode,
                    diskCache: FlagCache(directory: state)),
                store: store, stateDirectory: state, configuration: configuration, hwid: "hwid-1", clock: clock,
                bootID: "boot-a", jitter: { 0.5 }, logger: lines.logger)
        }

        var served: [String] { store.current.flags.sorted.map(\.key) }
    }

    static func text(_ directory: TemporaryDirectory, _ name: String) -> String? {
        FileManager.default.contents(atPath: directory.file(name)).map { String(decoding: $0, as: UTF8.self) }
    }

    // MARK: This version reads 0.1.0's state

    @Test("0.1.0's cache and user id are read: its flags are served, as its user, without a fetch")
    func readsThePreviousVersionsCacheAndUserId() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write(FlagCache.file, Self.cacheText(format: 2))
        try directory.write(Refresher.userIdFile, "alice")
        let start = Start(directory)
        await start.refresher.start()
        #expect(start.served == ["new_checkout"])
        #expect(start.store.current.flags["new_checkout"]?.properties["button_color"] == "green")
        #expect(await start.refresher.userId == "alice")
        #expect(start.fetcher.fetches.isEmpty)
        #expect(start.lines.count("state-set-aside") == 0)
    }

    @Test("0.1.0's overrides file and kept address, without a format, are read")
    func readsThePreviousVersionsOverridesAndAddress() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        try directory.write(
            LocalOverrides.file, #"{"overrides":[{"key":"dark_mode","enabled":true,"properties":{}}]}"# + "\n")
        try directory.write(
            BaseAddress.file,
            #"{"applicationCode":"ABCDE-12345","baseURL":"https://eu.api.pushwoosh.example/json/1.3/","goodAt":1}"#)
        let lines = Lines()
        #expect(LocalOverrides.load(from: state, logger: lines.logger).map(\.key) == ["dark_mode"])
        let address = BaseAddress(
            initial: try #require(URL(string: "https://ABCDE-12345.api.pushwoosh.com/json/1.3/")),
            applicationCode: Self.code, follows: true, stateDirectory: state, logger: lines.logger)
        #expect(address.current.absoluteString == "https://eu.api.pushwoosh.example/json/1.3/")
        #expect(lines.count("state-set-aside") == 0)
    }

    // MARK: 0.1.0 reads what this version writes

    /// 0.1.0 reads a cache of format 1 or 2 and ignores members it does not know; it reads `overrides` of the
    /// overrides file and `applicationCode`, `baseURL` and `goodAt` of the kept address, nothing else. The
    /// package's rollback leg (systemd/test-nspawn.sh) runs 0.1.0 itself on what this version wrote.
    @Test("What this version writes keeps the members and the cache format 0.1.0 reads")
    func writesWhatThePreviousVersionReads() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let start = Start(directory)
        await start.refresher.start()
        await start.refresher.tick()
        #expect(start.served == ["fetched"])
        let cache = try JSONValue(parsing: try #require(Self.text(directory, FlagCache.file)))
        #expect(cache["format"]?.integerValue == 2)
        #expect(cache["userId"]?.stringValue == "hwid-1")

        let overrides = LocalOverrides(store: start.store, directory: state, logger: start.lines.logger)
        _ = overrides.set(FlagOverride(key: "dark_mode", isEnabled: true, properties: [:]))
        let kept = try JSONValue(parsing: try #require(Self.text(directory, LocalOverrides.file)))
        #expect(kept["format"]?.integerValue == 1)
        #expect(OverrideList(result: kept)?.overrides.map(\.key) == ["dark_mode"])

        let address = BaseAddress(
            initial: try #require(URL(string: "https://ABCDE-12345.api.pushwoosh.com/json/1.3/")),
            applicationCode: Self.code, follows: true, stateDirectory: state, logger: start.lines.logger)
        address.move(to: try #require(URL(string: "https://eu.api.pushwoosh.example/json/1.3/")))
        let record = try JSONValue(parsing: try #require(Self.text(directory, BaseAddress.file)))
        #expect(record["format"]?.integerValue == 1)
        #expect(record["applicationCode"]?.stringValue == Self.code)
        #expect(record["baseURL"]?.stringValue == "https://eu.api.pushwoosh.example/json/1.3/")

        // The user id stays plain text, which every version reads as it is.
        _ = await start.refresher.setUserId("bob")
        #expect(Self.text(directory, Refresher.userIdFile) == "bob")
    }

    // MARK: A newer version's state

    @Test("A cache of a newer format is set aside and never served; the user id stays; a reload serves the next")
    func setsAsideANewerCacheAndReloadsAfterIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let newer = Self.cacheText(format: 3)
        try directory.write(FlagCache.file, newer)
        try directory.write(Refresher.userIdFile, "alice")
        let aside = StateDirectory.setAsideName(FlagCache.file)

        let first = Start(directory)
        await first.refresher.start()
        // Every member 0.1.0 reads is there and valid: only the format keeps its flags from being served.
        #expect(first.served.isEmpty)
        #expect(await first.refresher.userId == "alice")
        #expect(Self.text(directory, FlagCache.file) == nil)
        #expect(Self.text(directory, aside) == newer)
        #expect(first.lines.count("PWFLAGS_EVENT=state-set-aside") == 1)
        #expect(first.lines.count("STATE_FORMAT=3") == 1)

        // A reload before any fetch: nothing to set aside again, and the file set aside is left alone.
        let reload = Start(directory)
        await reload.refresher.start()
        #expect(reload.served.isEmpty)
        #expect(reload.lines.count("state-set-aside") == 0)
        #expect(Self.text(directory, aside) == newer)

        // The fetch writes this version's cache, for the same user; the next reload serves it.
        await reload.refresher.tick()
        #expect(reload.fetcher.fetches == ["alice"])
        #expect(reload.served == ["fetched"])
        let written = try JSONValue(parsing: try #require(Self.text(directory, FlagCache.file)))
        #expect(written["format"]?.integerValue == FlagCache.format)
        let next = Start(directory)
        await next.refresher.start()
        #expect(next.served == ["fetched"])
        #expect(await next.refresher.userId == "alice")
        #expect(next.fetcher.fetches.isEmpty)
        #expect(next.lines.count("state-set-aside") == 0)
        #expect(Self.text(directory, Refresher.userIdFile) == "alice")
    }

    @Test("A cache that is not JSON, or has no whole-number format, stays a corrupt cache: not set aside")
    func corruptCacheIsNotSetAside() async throws {
        for text in ["{not json", #"{"format":"3"}"#, #"{"format":2.5}"#] {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            try directory.write(FlagCache.file, text)
            let start = Start(directory)
            await start.refresher.start()
            #expect(start.served.isEmpty)
            #expect(start.lines.count("state-set-aside") == 0, "\(text)")
            #expect(start.lines.count("the cache file is corrupt") == 1, "\(text)")
            #expect(Self.text(directory, FlagCache.file) == text)
        }
    }

    @Test("An overrides file of a newer format is set aside: no flag is overridden, the next override is kept")
    func setsAsideNewerOverrides() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let newer = #"{"format":2,"overrides":[{"key":"dark_mode","enabled":true,"properties":{}}]}"#
        try directory.write(LocalOverrides.file, newer)
        let lines = Lines()
        #expect(LocalOverrides.load(from: state, logger: lines.logger).isEmpty)
        #expect(lines.count("PWFLAGS_EVENT=state-set-aside") == 1)
        #expect(Self.text(directory, StateDirectory.setAsideName(LocalOverrides.file)) == newer)
        // Loaded again (a restart): nothing there, nothing set aside again.
        #expect(LocalOverrides.load(from: state, logger: lines.logger).isEmpty)
        #expect(lines.count("state-set-aside") == 1)
        let store = FlagStore()
        _ = LocalOverrides(store: store, directory: state, logger: lines.logger).set(
            FlagOverride(key: "beta", isEnabled: true, properties: [:]))
        #expect(LocalOverrides.load(from: state, logger: lines.logger).map(\.key) == ["beta"])
    }

    @Test("A kept address of a newer format is set aside: calls go to the default address")
    func setsAsideNewerAddress() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let newer =
            #"{"format":2,"applicationCode":"ABCDE-12345","baseURL":"https://eu.api.pushwoosh.example/json/1.3/"}"#
        try directory.write(BaseAddress.file, newer)
        let lines = Lines()
        let initial = try #require(URL(string: "https://ABCDE-12345.api.pushwoosh.com/json/1.3/"))
        let address = BaseAddress(
            initial: initial, applicationCode: Self.code, follows: true, stateDirectory: state, logger: lines.logger)
        #expect(address.current == initial)
        #expect(lines.count("PWFLAGS_EVENT=state-set-aside") == 1)
        #expect(Self.text(directory, BaseAddress.file) == nil)
        #expect(Self.text(directory, StateDirectory.setAsideName(BaseAddress.file)) == newer)
    }

    @Test("A newer file that cannot be renamed is still not read, and the log says so")
    func unrenamableNewerFileIsNotRead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // The name it would take is a directory that is not empty: rename(2) fails.
        let aside = StateDirectory.setAsideName(LocalOverrides.file)
        try FileManager.default.createDirectory(atPath: directory.file(aside + "/x"), withIntermediateDirectories: true)
        try directory.write(
            LocalOverrides.file, #"{"format":9,"overrides":[{"key":"dark_mode","enabled":true,"properties":{}}]}"#)
        let lines = Lines()
        #expect(LocalOverrides.load(from: StateDirectory(path: directory.path), logger: lines.logger).isEmpty)
        #expect(lines.count("cannot be set aside") == 1)
        #expect(lines.count("PWFLAGS_EVENT=state-set-aside") == 1)
    }
}

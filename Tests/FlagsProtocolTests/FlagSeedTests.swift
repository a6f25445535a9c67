import FlagsCore
import FlagsProtocol
import TestSupport
import Testing

/// The seed's file format (`pwflags export-seed`, `SeedFile=`): what is written is read back, and anything else
/// is refused with the reason, never guessed at.
@Suite(.hangLimit) struct FlagSeedTests {
    static let flags = [
        Flag(key: "b", isEnabled: false, ruleId: "", properties: [:]),
        Flag(key: "a", isEnabled: true, ruleId: "r1", properties: ["n": 1.5, "s": "x"], source: .pushwoosh),
    ]

    @Test func whatIsWrittenIsReadBackSortedAndWithoutSources() throws {
        let seed = FlagSeed(applicationCode: "ABCDE-12345", exportedAt: "2026-12-01T12:00:00Z", flags: Self.flags)
        let text = String(decoding: seed.encoded(), as: UTF8.self)
        #expect(text.hasPrefix(#"{"pwflagsdSeed":1,"applicationCode":"ABCDE-12345","#))
        #expect(!text.contains("source"))
        let read = try FlagSeed.decode(seed.encoded()).get()
        #expect(read.applicationCode == "ABCDE-12345")
        #expect(read.exportedAt == "2026-12-01T12:00:00Z")
        var unmarked = Self.flags[1]
        unmarked.source = nil
        #expect(read.flags == [unmarked, Self.flags[0]])
    }

    @Test(arguments: [
        ("[", "not JSON"),
        (#"{"flags":[]}"#, "not a seed"),
        (#"{"pwflagsdSeed":2,"applicationCode":"A","flags":[]}"#, "format 2"),
        (#"{"pwflagsdSeed":1,"flags":[]}"#, "no applicationCode"),
        (#"{"pwflagsdSeed":1,"applicationCode":"A"}"#, "no flags"),
        (#"{"pwflagsdSeed":1,"applicationCode":"A","flags":[{"key":"k"}]}"#, "flag 0"),
    ])
    func anythingElseIsRefusedWithItsReason(text: String, reason: String) {
        switch FlagSeed.decode(Array(text.utf8)) {
        case .success(let seed): Issue.record("read \(seed)")
        case .failure(let problem): #expect(problem.description.contains(reason), "\(problem)")
        }
    }
}

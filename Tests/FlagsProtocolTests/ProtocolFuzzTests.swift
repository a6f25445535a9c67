import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing

/// Fuzzes line framing, request decoding, the fast scanner and JSON printing for a bounded time, from the
/// checked-in corpus (`Tests/Fuzz/corpus`); the properties are `ProtocolFuzzCheck`'s.
///
/// `PWFLAGS_FUZZ_SECONDS` sets the run's length (default 5 s, what CI spends) and `PWFLAGS_FUZZ_SEED` its seed,
/// so a failure is replayed exactly.
@Suite(.hangLimit(fuzzingFor: "PWFLAGS_FUZZ_SECONDS")) struct ProtocolFuzzTests {
    static let corpus = FuzzCorpus.seeds()

    static var duration: Duration {
        let seconds = ProcessInfo.processInfo.environment["PWFLAGS_FUZZ_SECONDS"].flatMap(Double.init) ?? 5
        return .milliseconds(Int(seconds * 1000))
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["PWFLAGS_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x5EED_F1A6
    }

    @Test func theCorpusIsCheckedIn() {
        #expect(Self.corpus.count >= 40, "no corpus at \(FuzzCorpus.directory)")
    }

    @Test func everySeedKeepsTheProperties() {
        for (index, input) in Self.corpus.enumerated() {
            var random = SeededGenerator(seed: UInt64(index))
            for _ in 0..<16 {
                let problem = ProtocolFuzzCheck.check(input, random: &random)
                #expect(problem == nil, "seed file \(index): \(problem ?? "")")
            }
        }
    }

    @Test func mutatedInputsKeepThePropertiesAndNoneTakesLong() throws {
        let seed = Self.seed
        var mutator = FuzzMutator(seed: seed, corpus: Self.corpus)
        var random = SeededGenerator(seed: seed ^ 0xF00D)
        let clock = ContinuousClock()
        let started = clock.now
        let deadline = started + Self.duration
        var executions = 0
        var slowest = Duration.zero
        var slowestInput: [UInt8] = []
        // At least 1,000 inputs however slow the machine (a sanitizer build under load), more while time is left.
        while clock.now < deadline || executions <= 1000 {
            for _ in 0..<64 {
                let input = mutator.next()
                let start = clock.now
                let problem = ProtocolFuzzCheck.check(input, random: &random)
                let elapsed = clock.now - start
                if elapsed > slowest { (slowest, slowestInput) = (elapsed, input) }
                executions += 1
                if let problem {
                    let path = NSTemporaryDirectory() + "pwflags-fuzz-failure-\(seed)-\(executions)"
                    _ = FileManager.default.createFile(atPath: path, contents: Data(input))
                    Issue.record("seed \(seed), execution \(executions) (input saved to \(path)): \(problem)")
                    return
                }
            }
        }
        // A slow input may only have been preempted on a busy machine: time it alone, at its best of three.
        let retimed =
            (0..<3).map { _ in
                clock.measure { _ = ProtocolFuzzCheck.check(slowestInput, random: &random) }
            }.min() ?? .zero
        print(
            "protocol fuzz: \(executions) inputs in \(clock.now - started), seed \(seed), corpus \(Self.corpus.count),"
                + " slowest \(slowest) (\(retimed) alone, \(slowestInput.count) bytes)")
        // No input may hang the parser: each is at most 4 KiB, so even a sanitizer build answers in far less.
        if retimed >= .seconds(1) {
            let path = NSTemporaryDirectory() + "pwflags-fuzz-slow-\(seed)"
            _ = FileManager.default.createFile(atPath: path, contents: Data(slowestInput))
            Issue.record("an input takes \(retimed) to check (saved to \(path))")
        }
    }
}

import FlagsCore
import Foundation
import TestSupport
import Testing

/// libpwflags under valgrind memcheck, AddressSanitizer and ThreadSanitizer, and its JSON reader under
/// libFuzzer: no leak, no invalid access, no data race, no crash.
@Suite(.serialized, .hangLimit) struct CLibrarySanitizerTests {
    /// A session that uses every call: reads, a listener, a change, calls with callbacks, a daemon restart.
    static func exercise(_ program: CProgram, _ daemon: DaemonProcess) async throws -> DaemonProcess {
        #expect(program.ask("snapshot 60000", expecting: "snapshot", timeout: .seconds(90)) == "snapshot 1")
        #expect(program.ask("listen", expecting: "listening") == "listening 1")
        #expect(program.ask("string new_checkout button_color x", expecting: "string") == "string green")
        #expect(program.ask("object new_checkout layout", expecting: "object") == #"object {"columns":2}"#)
        #expect(program.ask("impression new_checkout", expecting: "impression", timeout: .seconds(60)) != nil)
        #expect(program.ask("status", expecting: "status", timeout: .seconds(60))?.hasPrefix("status error=0") == true)
        #expect(program.ask("refresh", expecting: "refresh", timeout: .seconds(60)) == "refresh error=0 status=200")
        try daemon.writeFlags([Fixtures.newCheckout, Fixtures.darkMode])
        #expect(program.line(startingWith: "update", timeout: .seconds(60)) != nil)
        let second = try daemon.restarted()
        try second.writeFlags([Fixtures.newCheckout])
        #expect(program.line(startingWith: "update", timeout: .seconds(60)) == "update changed= removed=dark_mode")
        #expect(program.ask("unlisten", expecting: "unlistened") == "unlistened 0")
        return second
    }

    @Test("valgrind memcheck: no leak, no invalid access, in both the loop and the thread mode")
    func valgrind() async throws {
        let probe = try CLibrary.build().compile(["tests/probe.c"], flags: ["-O0", "-g"], output: "probe-g")
        for mode in [[], ["--thread"]] {
            let daemon = try DaemonProcess.serving(Fixtures.all)
            let program = try CProgram(
                probe, [daemon.socketPath] + mode,
                launcher: [
                    "/usr/bin/valgrind", "--quiet", "--error-exitcode=99", "--leak-check=full",
                    "--show-leak-kinds=all", "--errors-for-leak-kinds=all",
                ])
            let second = try await Self.exercise(program, daemon)
            defer { second.cleanUp() }
            #expect(program.finish(timeout: .seconds(300)) == 0, "valgrind \(mode)")
        }
    }

    @Test("AddressSanitizer (with LeakSanitizer and UBSan): the same session is clean")
    func addressSanitizer() async throws {
        let flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
        let library = try CLibrary.build(compiler: "gcc", extraFlags: flags)
        let probe = try library.compile(["tests/probe.c"], output: "probe-asan")
        let daemon = try DaemonProcess.serving(Fixtures.all)
        let program = try CProgram(
            probe, [daemon.socketPath], environment: ["ASAN_OPTIONS": "detect_leaks=1:exitcode=98"])
        let second = try await Self.exercise(program, daemon)
        defer { second.cleanUp() }
        #expect(program.finish() == 0)
    }

    @Test("ThreadSanitizer: eight threads read while changes pour in")
    func threadSanitizer() async throws {
        let library = try CLibrary.build(compiler: "clang-14", extraFlags: ["-fsanitize=thread", "-g", "-O1"])
        let stress = try library.compile(["tests/stress.c"], output: "stress-tsan")
        let flag = { (count: Int) in
            Flag(
                key: "stress", isEnabled: count % 2 == 0, ruleId: "r\(count)",
                properties: [
                    "value": .string("v\(count)"), "count": .number(Double(count)),
                    "nested": ["n": .number(Double(count))],
                ])
        }
        let daemon = try DaemonProcess.serving([flag(0)])
        defer { daemon.cleanUp() }
        let program = try CProgram(
            stress, [daemon.socketPath, "20", "8"], environment: ["TSAN_OPTIONS": "halt_on_error=1:exitcode=97"])
        #expect(program.line(startingWith: "ready", timeout: .seconds(60)) == "ready")
        var count = 1
        while program.process.isRunning, count < 400 {
            try daemon.writeFlags([flag(count)])
            count += 1
            _ = await Eventually.wait(timeout: .milliseconds(100)) { !program.process.isRunning }
        }
        #expect(program.line(startingWith: "heard", timeout: .seconds(120))?.hasPrefix("heard") == true)
        #expect(program.finish() == 0)
    }

    @Test("libFuzzer: the JSON reader and the flag decoder survive 100,000 runs from the seed corpus")
    func fuzzJSONReader() throws {
        let directory = try TemporaryDirectory(prefix: "pwfuzz")
        defer { directory.remove() }
        let source = CLibrary.source
        try CLibrary.runShell(
            "clang-14 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I'\(source)/include' "
                + "-I'\(source)/src' '\(source)/src/json.c' '\(source)/src/json_writer.c' '\(source)/src/flag.c' '\(source)/fuzz/json_fuzz.c' "
                + "-o '\(directory.path)/json-fuzz' && mkdir '\(directory.path)/corpus' && "
                + "'\(directory.path)/json-fuzz' -seed=1 -runs=100000 -max_len=4096 '\(directory.path)/corpus' "
                + "'\(source)/fuzz/corpus' 2>'\(directory.path)/log'")
    }
}

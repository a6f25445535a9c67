import Foundation
import PWFlagsTestKit

#if canImport(Glibc)
    import Glibc
#endif

/// pwflags-soak: pwflagsd for ten minutes (or `--seconds N`) under steady reads, a flag change every second and
/// subscribers coming and going; PASS when memory and descriptors hold and every subscriber saw every change.
///
///     pwflags-soak [--seconds N] [--json PATH] [--rate N] [--getters N] [--flags N] [--seed N]
///
/// It starts the `pwflagsd` found next to it: build both with `swift build -c release`.
let options: SoakOptions
do {
    options = try SoakOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    if let message = error.message {
        FileHandle.standardError.write(Data("pwflags-soak: \(message)\n\(SoakOptions.usage)\n".utf8))
        exit(2)
    }
    print(SoakOptions.usage)
    exit(0)
}

signal(SIGPIPE, SIG_IGN)
TerminationSignals.stopDaemonsOnTermination()
let report = Report()
report.machine = Machine.describe()
report.machine["seconds"] = String(options.seconds)
FileHandle.standardError.write(
    Data(
        "pwflags-soak: \(options.seconds) s, \(options.rate) calls/s, \(options.flags) flags, seed \(options.seed)\n"
            .utf8))

// Whatever happens, the run ends with a verdict, on the terminal and in the JSON: an error stops the soak as a FAIL
// that says why, with the figures taken until then.
var passed = false
do {
    passed = try Soak(options: options, report: report).run()
} catch {
    FileHandle.standardError.write(Data("pwflags-soak: \(error)\n".utf8))
    report.extra = [
        "verdict": "FAIL", "seed": .string(String(options.seed)), "errors": [.string("the soak stopped: \(error)")],
    ]
}

print(report.table())
print("pwflags-soak: \(passed ? "PASS" : "FAIL") (seed \(options.seed))")
if let jsonPath = options.jsonPath {
    do {
        try report.json().write(toFile: jsonPath, atomically: true, encoding: .utf8)
    } catch {
        FileHandle.standardError.write(Data("pwflags-soak: cannot write \(jsonPath): \(error)\n".utf8))
        TerminationSignals.exit(1)
    }
}
TerminationSignals.exit(passed ? 0 : 1)

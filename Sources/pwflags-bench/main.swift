import Foundation
import PWFlagsTestKit

#if canImport(Glibc)
    import Glibc
#endif

/// pwflags-bench: pwflagsd measured against the machine's own floor, side by side in one run.
///
///     pwflags-bench [--quick | --smoke] [--json PATH] [--deb PACKAGE] [--wakeups-only] [--kept-per-call-only]
///     pwflags-bench --call-soak SECONDS [--json PATH]
///
/// `--kinds NAME,NAME` narrows `--call-soak` and `--kept-per-call-only` to those kinds of call (the names the
/// rows print, such as `line.refresh` or `varlink.Get`).
///
/// Build it in release (`swift build -c release --product pwflags-bench`): it starts the `pwflagsd` found
/// next to it.
let arguments = Array(CommandLine.arguments.dropFirst())

/// The value after `option` in the arguments, when there is one.
func value(of option: String) -> String? {
    arguments.firstIndex(of: option).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}

/// The value of `option`, or the usage line on standard error and exit status 2.
func required(_ option: String, usage: String) -> String {
    guard let value = value(of: option) else {
        FileHandle.standardError.write(Data("pwflags-bench: \(usage)\n".utf8))
        exit(2)
    }
    return value
}

/// Prints what `tally` returns and exits 0, or prints its error and exits 1: the end of a flood helper's run.
func printTally(_ tally: () throws -> some Any) -> Never {
    do {
        print(try tally())
        exit(0)
    } catch {
        print("pwflags-bench: \(error)")
        exit(1)
    }
}

if let index = arguments.firstIndex(of: "--serve-echo"), arguments.indices.contains(index + 1) {
    // The echo floor in a process of its own, as the daemon is: started by the benchmark itself.
    signal(SIGPIPE, SIG_IGN)
    let server = try EchoServer(path: arguments[index + 1])
    _ = server
    while true { pause() }
}

if let index = arguments.firstIndex(of: "--flood"), arguments.indices.contains(index + 1) {
    // Calls of one kind for a test that makes them as another user (CallMemoryTests): `--flood NAME --count N
    // --at ADDRESS`, the kind's name from FloodCall.catalogue; prints the tally, exits 1 when the daemon stopped
    // answering.
    signal(SIGPIPE, SIG_IGN)
    guard let call = FloodCall.named(arguments[index + 1], key: value(of: "--key") ?? "new_checkout"),
        let count = value(of: "--count").flatMap(Int.init), let address = value(of: "--at")
    else {
        FileHandle.standardError.write(Data("pwflags-bench: --flood NAME --count N --at ADDRESS [--key KEY]\n".utf8))
        exit(2)
    }
    printTally { try CallFlood.run(call, count: count, at: address) }
}

if let seconds = value(of: "--bus-hangup-flood").flatMap(Double.init) {
    // A member's hang-up flood on the bus for a test that makes it as another user (BusFloodTests):
    // `--bus-hangup-flood SECONDS --at ADDRESS [--calls N] [--workers N]`; prints the tally.
    let address = required("--at", usage: "--bus-hangup-flood SECONDS --at ADDRESS")
    let calls = value(of: "--calls").flatMap(Int.init) ?? 8
    let workers = value(of: "--workers").flatMap(Int.init) ?? 4
    print(BusHangUpFlood.run(address: address, seconds: seconds, calls: calls, workers: workers))
    exit(0)
}

if let seconds = value(of: "--bus-getall-flood").flatMap(Double.init) {
    // A member keeping `GetAll` calls in flight on the bus, for a test that makes it as another user
    // (BusFloodTests): `--bus-getall-flood SECONDS --at ADDRESS [--in-flight N]`; prints the tally.
    let address = required("--at", usage: "--bus-getall-flood SECONDS --at ADDRESS")
    let inFlight = value(of: "--in-flight").flatMap(Int.init) ?? 8
    printTally { try BusGetAllFlood.run(address: address, seconds: seconds, inFlight: inFlight) }
}

if let seconds = value(of: "--bus-probe").flatMap(Double.init) {
    // Another member's calls during a flood: `--bus-probe SECONDS --at ADDRESS`; prints their times.
    let address = required("--at", usage: "--bus-probe SECONDS --at ADDRESS")
    printTally { try BusProbe.run(address: address, seconds: seconds) }
}

if arguments.contains("--help") {
    print(
        "Usage: pwflags-bench [--quick | --smoke] [--json PATH] [--deb PACKAGE]\nMeasures the pwflagsd built next to it; see docs/performance.md."
    )
    exit(0)
}
let extent: Extent = arguments.contains("--smoke") ? .smoke : arguments.contains("--quick") ? .quick : .full
let jsonPath = value(of: "--json")
let kinds = value(of: "--kinds").map { Set($0.split(separator: ",").map(String.init)) }
let packagePath = value(of: "--deb")

signal(SIGPIPE, SIG_IGN)
TerminationSignals.stopDaemonsOnTermination()
Measure.raiseFileLimit()
let report = Report()
report.machine = Machine.describe()
report.machine["mode"] = extent.rawValue

/// Writes the report to `--json PATH`, when given; exits 1 when it cannot.
@MainActor func writeJSON() {
    guard let jsonPath else { return }
    do {
        try report.json().write(toFile: jsonPath, atomically: true, encoding: .utf8)
    } catch {
        FileHandle.standardError.write(Data("pwflags-bench: cannot write \(jsonPath): \(error)\n".utf8))
        TerminationSignals.exit(1)
    }
}

/// Prints the table, writes `--json` and exits with `status`: the end of every mode.
@MainActor func finish(status: Int32 = 0) -> Never {
    print(report.table())
    writeJSON()
    TerminationSignals.exit(status)
}

do {
    let directory = try TemporaryDirectory(prefix: "pwb")
    defer { directory.remove() }
    let bench = Benchmark(extent: extent, report: report, directory: directory)
    let echo = try EchoServer(path: directory.file("echo.sock"))
    defer { echo.stop() }
    let epollEcho = try EchoServer(path: directory.file("epoll.sock"), design: .epoll)
    defer { epollEcho.stop() }
    let processEcho = try EchoProcess(benchPath: CommandLine.arguments[0], path: directory.file("echo-process.sock"))
    defer { processEcho.stop() }
    let daemon = try bench.localDaemon(flags: 100, name: "main")
    defer { daemon.cleanUp() }
    if arguments.contains("--push-only") {
        // The OFREP event stream's push latency beside the line protocol's, alone.
        try OFREPBenchmark.pushLatency(bench: bench, extent: extent, report: report)
        finish()
    }
    if arguments.contains("--get-only") {
        // For profiling the daemon's get path alone.
        for _ in 0..<10 {
            try bench.sequentialGet(daemon: daemon, echo: echo, epollEcho: epollEcho, processEcho: processEcho)
        }
        TerminationSignals.exit(0)
    }
    if arguments.contains("--mirror-only") {
        // For profiling the client library's read path alone.
        await MirrorBenchmark.run(socketPath: daemon.socketPath, extent: .full, report: report)
        TerminationSignals.exit(0)
    }
    if arguments.contains("--wakeups-only") {
        // How often the idle daemon wakes, alone (67 s each way, with and without a watchdog; 22 s with --quick).
        try Wakeups.run(bench: bench, extent: extent, report: report)
        finish()
    }
    if arguments.contains("--c-library-only") {
        // The C library's rows alone.
        try CLibraryBenchmark.run(
            bench: bench, socketPath: daemon.socketPath, extent: extent, report: report, directory: directory)
        finish()
    }
    if arguments.contains("--dbus-only") {
        // The D-Bus rows alone.
        try BusBenchmark.run(bench: bench, extent: extent, report: report, directory: directory)
        finish()
    }
    if let index = arguments.firstIndex(of: "--call-soak"), arguments.indices.contains(index + 1),
        let seconds = Int(arguments[index + 1])
    {
        // CI's soak: every kind of call on every surface for SECONDS; exits 1 when memory did not come back.
        let held = try KeptPerCall.soak(
            seconds: seconds, kinds: kinds, bench: bench, report: report, directory: directory)
        finish(status: held ? 0 : 1)
    }
    if arguments.contains("--kept-per-call-only") {
        // What each kind of call keeps once answered, alone (2,000 calls of each with --quick, else 100,000).
        try KeptPerCall.run(bench: bench, extent: extent, kinds: kinds, report: report, directory: directory)
        finish()
    }
    if arguments.contains("--varlink-only") {
        // The Varlink rows alone.
        try VarlinkBenchmark.run(bench: bench, extent: extent, report: report)
        finish()
    }
    if arguments.contains("--footprint-only") {
        // Sizes, memory and start-up alone: what a change to the binary or its start moves.
        Footprint.run(
            binaryDirectory: URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path,
            package: packagePath, report: report, directory: directory)
        try bench.memory()
        try bench.startup(benchPath: CommandLine.arguments[0])
        finish()
    }
    try bench.sequentialGet(daemon: daemon, echo: echo, epollEcho: epollEcho, processEcho: processEcho)
    try bench.throughput(daemon: daemon, echo: echo, processEcho: processEcho)
    await MirrorBenchmark.run(socketPath: daemon.socketPath, extent: extent, report: report)
    try CLibraryBenchmark.run(
        bench: bench, socketPath: daemon.socketPath, extent: extent, report: report, directory: directory)
    try BusBenchmark.run(bench: bench, extent: extent, report: report, directory: directory)
    try VarlinkBenchmark.run(bench: bench, extent: extent, report: report)
    try bench.fileFanOut(subscribers: [1, 100, 1_000])
    try await bench.upstreamFanOut(subscribers: [1, 100, 1_000])
    try bench.scale()
    try OFREPBenchmark.run(bench: bench, extent: extent, report: report)
    try OFREPBenchmark.pushLatency(bench: bench, extent: extent, report: report)
    Footprint.run(
        binaryDirectory: URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path,
        package: packagePath, report: report, directory: directory)
    try bench.memory()
    try KeptPerCall.run(bench: bench, extent: extent, kinds: kinds, report: report, directory: directory)
    try bench.startup(benchPath: CommandLine.arguments[0])
    try Wakeups.run(bench: bench, extent: extent, report: report)
} catch {
    FileHandle.standardError.write(Data("pwflags-bench: \(error)\n".utf8))
    TerminationSignals.exit(1)
}

finish()

import Foundation
import TestSupport
import Testing

/// An LD_PRELOAD shim of `Tests/<folder>/<name>.c`, built with the system's C compiler (or the toolchain's clang)
/// into a test's directory.
enum PreloadShim {
    static let testsDirectory = Repository.root.appendingPathComponent("Tests")

    /// The C compiler for code loaded into the programs under test, when they are not the host's: `PWFLAGS_CC`
    /// (CI's arm64 leg sets `aarch64-linux-gnu-gcc`, and the daemon, the CLI and the C programs then all run under
    /// qemu). A shim must be of the program's architecture, or the loader skips it.
    static var targetCompiler: String? {
        ProcessInfo.processInfo.environment["PWFLAGS_CC"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Builds `source` (a path under `Tests/`) into `directory`; returns the shared object's path.
    static func build(_ source: String, in directory: TemporaryDirectory) throws -> String {
        let sourcePath = testsDirectory.appendingPathComponent(source).path
        let output = directory.file(URL(fileURLWithPath: source).deletingPathExtension().lastPathComponent + ".so")
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        let compilers =
            targetCompiler.map { target in path.map { "\($0)/\(target)" } }
            ?? (["/usr/bin/cc", "/usr/bin/gcc", "/usr/bin/clang"] + path.map { "\($0)/clang" })
        let compiler = try #require(
            compilers.first { FileManager.default.isExecutableFile(atPath: $0) }, "no C compiler for \(source)")
        let built = try Command.run(
            compiler, ["-shared", "-fPIC", "-O2", "-o", output, sourcePath, "-ldl", "-lpthread"], check: false,
            timeout: .seconds(120))
        try #require(built.status == 0, "\(source) did not build: \(built)")
        return output
    }
}

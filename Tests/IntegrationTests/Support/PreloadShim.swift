import Foundation
import TestSupport
import Testing

/// An LD_PRELOAD shim of `Tests/<folder>/<name>.c`, built with the system's C compiler (or the toolchain's clang)
/// into a test's directory.
enum PreloadShim {
    static let testsDirectory = Repository.root.appendingPathComponent("Tests")

    /// Builds `source` (a path under `Tests/`) into `directory`; returns the shared object's path.
    static func build(_ source: String, in directory: TemporaryDirectory) throws -> String {
        let sourcePath = testsDirectory.appendingPathComponent(source).path
        let output = directory.file(URL(fileURLWithPath: source).deletingPathExtension().lastPathComponent + ".so")
        let compilers =
            ["/usr/bin/cc", "/usr/bin/gcc", "/usr/bin/clang"]
            + ((ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/clang" })
        let compiler = try #require(
            compilers.first { FileManager.default.isExecutableFile(atPath: $0) }, "no C compiler for \(source)")
        let built = try Command.run(
            compiler, ["-shared", "-fPIC", "-O2", "-o", output, sourcePath, "-ldl", "-lpthread"], check: false,
            timeout: .seconds(120))
        try #require(built.status == 0, "\(source) did not build: \(built)")
        return output
    }
}

import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// libpwflags as a C program gets it: built by its own script into a temporary directory, once per test
/// process and flavour, and programs compiled against the installed header and `.pc` file.
struct CLibrary: Sendable {
    static let source = Repository.path("Sources/libpwflags")

    /// Where the build put `lib/`, `include/` and `lib/pkgconfig/pwflags.pc`.
    let prefix: String
    /// The compiler and flags the library was built with (sanitizers must match the programs').
    let compiler: String
    let extraFlags: [String]

    var libraryDirectory: String { prefix + "/lib" }
    var sharedObject: String { libraryDirectory + "/libpwflags.so.0" }

    private static let built = Mutex<[String: CLibrary]>([:])

    /// The C compiler of the library and programs by default: gcc, or the architecture under test's
    /// (`PreloadShim.targetCompiler`: the arm64 leg's programs run under qemu through binfmt_misc).
    static var defaultCompiler: String { PreloadShim.targetCompiler ?? "gcc" }

    /// The library built with `compiler` and `extraFlags` (for example `-fsanitize=address`).
    static func build(compiler: String = defaultCompiler, extraFlags: [String] = []) throws -> CLibrary {
        let flavour = ([compiler] + extraFlags).joined(separator: " ")
        if let library = built.withLock({ $0[flavour] }) { return library }
        let directory = try TemporaryDirectory(prefix: "pwlib")
        try runShell(
            "CC=\(compiler) EXTRA_CFLAGS='\(extraFlags.joined(separator: " "))' '\(source)/build.sh' '\(directory.path)'"
        )
        let library = CLibrary(prefix: directory.path, compiler: compiler, extraFlags: extraFlags)
        built.withLock { $0[flavour] = library }
        return library
    }

    /// Compiles `sources` (paths under Sources/libpwflags) with `compiler` (default: the library's) and
    /// `-Wall -Wextra -Werror`, `links` after the sources and the flags from `pkg-config --cflags --libs pwflags`; returns the program's path.
    func compile(
        _ sources: [String], compiler: String? = nil, flags: [String] = [], links: [String] = [], output name: String
    ) throws -> String {
        let output = prefix + "/" + name
        let files = sources.map { "'\(Self.source)/\($0)'" }.joined(separator: " ")
        try Self.runShell(
            "PKG_CONFIG_PATH='\(libraryDirectory)/pkgconfig' \(compiler ?? self.compiler) -Wall -Wextra -Werror "
                + "\((extraFlags + flags).joined(separator: " ")) \(files) -o '\(output)' "
                + "$(PKG_CONFIG_PATH='\(libraryDirectory)/pkgconfig' pkg-config --cflags --libs pwflags) -pthread "
                + "\(links.joined(separator: " ")) -Wl,-rpath,'\(libraryDirectory)'")
        return output
    }

    /// Runs a shell command line; throws with its output when it fails.
    static func runShell(_ line: String, timeout: Duration = .seconds(600)) throws {
        try Command.run("/bin/sh", ["-c", line], timeout: timeout)
    }
}

import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The Qt examples, built as a Qt program is on Debian (qtbase5-dev: `moc`, then g++ with pkg-config's Qt 5
/// flags), once per test process, into a directory every user may read, so that a test runs them as a member.
enum QtPrograms {
    private static let built = Mutex<[String: String]>([:])

    /// docs/dbus.md's QtDBus client, `examples/dbus/flags-qt.cpp`.
    static func busClient() throws -> String {
        try build("flags-qt") { directory in
            let source = Repository.path("examples/dbus/flags-qt.cpp")
            return "cd '\(directory)' && /usr/lib/qt5/bin/moc '\(source)' -o flags-qt.moc && "
                + "g++ -std=c++17 -fPIC -Wall -Wextra -Werror -I. '\(source)' -o flags-qt "
                + "$(pkg-config --cflags --libs Qt5DBus)"
        }
    }

    /// docs/c-library.md's Qt event loop around libpwflags, `Sources/libpwflags/examples/qt.cpp`.
    static func libraryExample() throws -> String {
        try build("qt-example") { directory in
            let library = try CLibrary.build()
            let program = try library.compile(
                ["examples/qt.cpp"], compiler: "g++", flags: ["-std=c++17", "-fPIC", "$(pkg-config --cflags Qt5Core)"],
                links: ["$(pkg-config --libs Qt5Core)"], output: "qt-example")
            return "cp '\(program)' '\(directory)/qt-example'"
        }
    }

    /// Runs `command(directory)` in a shell once per `name`, and returns the program it made there.
    private static func build(_ name: String, _ command: (String) throws -> String) throws -> String {
        if let program = built.withLock({ $0[name] }) { return program }
        let directory = try TemporaryDirectory(prefix: "pwqt")
        chmod(directory.path, 0o755)
        try CLibrary.runShell(try command(directory.path))
        let program = directory.file(name)
        built.withLock { $0[name] = program }
        return program
    }
}

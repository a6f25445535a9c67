import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A daemon whose boot clock the test moves forward, as a suspend would (`Tests/ClockShim/suspend-shift.c`, an
/// LD_PRELOAD shim built here): a time rule's duration (a session timeout in the background) passes at once,
/// without the test waiting for it.
struct Suspend {
    /// The file the shim reads the shift from.
    let file: String
    /// The environment that loads the shim into the daemon.
    let environment: [String: String]
    private var total: Int64 = 0

    /// Builds the shim into `directory`.
    init(in directory: TemporaryDirectory) throws {
        let shim = try PreloadShim.build("ClockShim/suspend-shift.c", in: directory)
        file = directory.file("suspend-shift")
        _ = FileManager.default.createFile(atPath: file, contents: Data(count: 8))
        environment = ["LD_PRELOAD": shim, "PWFLAGS_SUSPEND_SHIFT_FILE": file]
    }

    /// The device sleeps for `duration`: the daemon's boot clock moves forward by it at once.
    mutating func sleep(for duration: Duration) throws {
        let (seconds, attoseconds) = duration.components
        total += seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        let fd = open(file, O_WRONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        var value = total
        try #require(pwrite(fd, &value, 8, 0) == 8)
    }
}

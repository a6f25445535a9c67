import Foundation

/// What `/proc` says about another process: its open descriptors and its memory.
public struct ProcessStatus: Sendable, CustomStringConvertible {
    /// Entries in `/proc/PID/fd`.
    public var openFiles: Int
    /// Resident memory (`VmRSS`), in KiB.
    public var residentKiB: Int
    /// Resident anonymous memory (`RssAnon`): the heap, without the mapped binary and libraries.
    public var anonymousKiB: Int
    /// The peak of resident memory (`VmHWM`).
    public var peakResidentKiB: Int
    /// CPU time used so far, user and system, in clock ticks (`/proc/PID/stat`; 100 a second on Linux).
    public var cpuTicks: Int

    /// Reads the status of `pid`; nil when the process is gone.
    public init?(pid: Int32) {
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"),
            let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let nameEnd = stat.lastIndex(of: ")")
        else { return nil }
        // After the command name: state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
        cpuTicks = fields.count > 12 ? (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) : 0
        func kibibytes(_ field: String) -> Int {
            let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") }
            return line.flatMap {
                Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
            }
                ?? 0
        }
        openFiles = files.count
        residentKiB = kibibytes("VmRSS")
        anonymousKiB = kibibytes("RssAnon")
        peakResidentKiB = kibibytes("VmHWM")
    }

    public var description: String {
        "fds \(openFiles), VmRSS \(residentKiB) KiB, RssAnon \(anonymousKiB) KiB, VmHWM \(peakResidentKiB) KiB"
    }
}

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

    /// Reads the status of `pid`; nil when the process is gone.
    public init?(pid: Int32) {
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"),
            let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        else { return nil }
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

import Foundation

/// Another process's memory figures from `/proc/PID/status`, in bytes.
public struct ProcessMemory: Sendable, Equatable {
    /// `VmHWM`: the peak resident set size since the process started.
    public var peakResident: Int
    /// `VmRSS`: the resident set size now.
    public var resident: Int

    /// The figures of process `pid`; nil when it is gone or the file cannot be read.
    public static func of(pid: Int32) -> ProcessMemory? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        guard let peak = kilobytes("VmHWM", in: text), let resident = kilobytes("VmRSS", in: text) else { return nil }
        return ProcessMemory(peakResident: peak * 1024, resident: resident * 1024)
    }

    /// The value of a line such as `VmHWM:    12345 kB`.
    private static func kilobytes(_ name: String, in text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            return fields.count >= 2 ? Int(fields[1]) : nil
        }
        return nil
    }
}

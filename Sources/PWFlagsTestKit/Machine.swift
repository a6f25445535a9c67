import Foundation

/// What the figures were measured on.
public enum Machine {
    public static func describe() -> [String: String] {
        var machine: [String: String] = [:]
        machine["cores"] = String(ProcessInfo.processInfo.activeProcessorCount)
        machine["memory"] = String(format: "%.0f GiB", Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824)
        if let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let model = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("model name") })
        {
            machine["cpu"] = model.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        machine["os"] = ProcessInfo.processInfo.operatingSystemVersionString
        #if DEBUG
            machine["build"] = "debug"
        #else
            machine["build"] = "release"
        #endif
        return machine
    }
}

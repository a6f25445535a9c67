import Foundation

/// The processes `/proc` lists, read by parent: what a program started, and whether it still runs.
public enum ProcessTree {
    /// The state letter and parent of `pid` (`/proc/PID/stat` fields 3 and 4); nil when there is no such process.
    private static func stat(_ pid: Int32) -> (state: Character, parent: Int32, name: String)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let nameStart = text.firstIndex(of: "("), let nameEnd = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: nameEnd)...].split(separator: " ")
        guard fields.count > 1, let state = fields[0].first, let parent = Int32(fields[1]) else { return nil }
        return (state, parent, String(text[text.index(after: nameStart)..<nameEnd]))
    }

    /// The pids of the running children of `parent` whose command name is `name`.
    public static func children(of parent: Int32, named name: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let info = stat(pid) else { return false }
            return info.parent == parent && info.name == name && info.state != "Z"
        }
    }

    /// Whether `pid` runs: it exists and is not a zombie waiting for a parent to reap it.
    public static func isRunning(_ pid: Int32) -> Bool {
        guard let info = stat(pid) else { return false }
        return info.state != "Z"
    }
}

public import FlagsCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Percentiles, memory and descriptor readings and flag files for pwflags-bench and pwflags-soak.
///
/// Intervals and thread CPU time are read from UnixIO's `MonotonicClock`, the one clock reader of the package.
public enum Measure {
    /// The p-th percentile (0...100) of samples, which it sorts.
    public static func percentile(_ samples: inout [UInt64], _ p: Double) -> Double {
        guard !samples.isEmpty else { return .nan }
        samples.sort()
        let index = min(samples.count - 1, Int((Double(samples.count - 1) * p / 100).rounded()))
        return Double(samples[index])
    }

    /// `VmRSS` and `RssAnon` of a process, in KiB.
    public static func memory(of pid: Int32) -> (rss: Double, anon: Double) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
            return (.nan, .nan)
        }
        func field(_ name: String) -> Double {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return .nan }
            return Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? .nan
        }
        return (field("VmRSS"), field("RssAnon"))
    }

    /// `RssAnon` of a process in KiB; nil when it is gone.
    public static func anonymousKiB(pid: Int32) -> Int? {
        let anon = memory(of: pid).anon
        return anon.isNaN ? nil : Int(anon)
    }

    /// `RssAnon` once the process is done with what it was sent: its descriptors back to `descriptors` (the
    /// connections of clients that hung up are closed) and its readings, every 50 ms, alike for `quiet` (longer
    /// than the daemon waits after a burst before it hands freed memory back), or `timeout` passed; nil when it
    /// is gone.
    public static func settledAnonymousKiB(
        pid: Int32, descriptors: Int? = nil, quiet: Duration = .milliseconds(400), timeout: Duration = .seconds(5)
    ) -> Int? {
        let deadline = ContinuousClock.now + timeout
        var last = anonymousKiB(pid: pid)
        var alikeSince = ContinuousClock.now
        while ContinuousClock.now < deadline {
            usleep(50_000)
            let now = anonymousKiB(pid: pid)
            let closed = descriptors.map { (openDescriptors(of: pid) ?? 0) <= $0 } ?? true
            if now != last || !closed { alikeSince = ContinuousClock.now }
            if ContinuousClock.now - alikeSince >= quiet { return now }
            last = now
        }
        return last
    }

    /// The number of open file descriptors of a process (the entries of `/proc/PID/fd`); nil when unreadable.
    public static func openDescriptors(of pid: Int32) -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count
    }

    /// `count` flags named `flag_0`…, each with a few properties of every type.
    public static func flags(_ count: Int, variant: Int = 0) -> [Flag] {
        (0..<count).map { index in
            Flag(
                key: "flag_\(index)",
                isEnabled: (index + variant) % 3 != 0,
                ruleId: index % 5 == 0 ? "default" : "r_\(index)",
                properties: [
                    "color": .string(index % 2 == 0 ? "green" : "blue"), "limit": .number(Double(index % 100)),
                    "beta": .bool(index % 2 == 1), "variant": .number(Double(variant)),
                ]
            )
        }
    }

    /// The local flags file text (the `getFeatureFlags` `response` shape).
    public static func flagsFile(_ flags: [Flag]) -> String {
        let entries: [JSONValue] = flags.map {
            [
                "key": .string($0.key), "enabled": .bool($0.isEnabled), "rule_id": .string($0.ruleId),
                "properties": .object($0.properties),
            ]
        }
        return JSONValue.object(["flags": .array(entries)]).serialized()
    }

    /// Raises the open-file limit to its hard maximum: a thousand subscribers need a thousand descriptors.
    public static func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

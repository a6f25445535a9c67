import Dispatch
import FeatureFlags
import FlagsCore
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Reads from many threads while updates land: the test to run under the thread sanitizer.
@Suite struct ClientLibraryConcurrencyTests {
    static func version(_ number: Int) -> Flag {
        Flag(
            key: "new_checkout", isEnabled: number % 2 == 0, ruleId: "r_\(number)",
            properties: ["n": .number(Double(number))])
    }

    @Test("8 threads × 100k reads of get and isEnabled while the flags change; every read is a whole version")
    func concurrentReadsDuringUpdates() async throws {
        let daemon = try DaemonProcess.serving([Self.version(0)])
        defer { daemon.cleanUp() }
        let directory = daemon.directory
        let flags = FeatureFlags(socketPath: daemon.socketPath)
        defer { flags.stop() }
        #expect(await flags.waitForFirstSnapshot(timeout: .seconds(15)))

        let versions = 20
        let writer = Thread {
            for number in 1...versions {
                try? directory.write("flags.json", FlagsFile.text([Self.version(number)]))
                usleep(2_000)
            }
        }
        writer.start()
        let torn = Mutex(0)
        let seen = Mutex(Set<String>())
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            var local = Set<String>()
            var bad = 0
            for _ in 0..<100_000 {
                guard let flag = flags.get("new_checkout") else {
                    bad += 1
                    continue
                }
                let number = Int(flag.number(forProperty: "n", default: -1))
                if flag.ruleId != "r_\(number)" || flag.isEnabled != (number % 2 == 0) { bad += 1 }
                _ = flags.isEnabled("new_checkout", default: false)
                local.insert(flag.ruleId)
            }
            torn.withLock { $0 += bad }
            seen.withLock { $0.formUnion(local) }
        }
        #expect(torn.withLock { $0 } == 0)
        #expect(await flags.waitUntil { $0.get("new_checkout")?.ruleId == "r_\(versions)" })
        print("distinct versions read: \(seen.withLock { $0.count })")
    }

    /// True in a test binary built with `--sanitize=thread`, whose every memory access is slowed down.
    static let underThreadSanitizer = dlsym(nil, "__tsan_init") != nil

    @Test("A read costs well under a microsecond", .disabled(if: underThreadSanitizer, "timed without the sanitizer"))
    func readsAreCheap() async throws {
        let daemon = try DaemonProcess.serving([Self.version(0)])
        defer { daemon.cleanUp() }
        let flags = FeatureFlags(socketPath: daemon.socketPath)
        defer { flags.stop() }
        #expect(await flags.waitForFirstSnapshot(timeout: .seconds(15)))
        let reads = 1_000_000
        var enabled = 0
        let elapsed = ContinuousClock().measure {
            for _ in 0..<reads where flags.isEnabled("new_checkout", default: false) { enabled += 1 }
        }
        let perRead = elapsed / reads
        print("isEnabled: \(perRead) per read")
        #expect(enabled == reads)
        #expect(perRead < .microseconds(1))
    }
}

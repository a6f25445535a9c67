import Foundation
import PWFlagsTestKit

/// What a device stores: the binaries next to the bench, stripped as the package strips them, and the package's
/// Installed-Size when a .deb is given (`--deb PATH`).
enum Footprint {
    static func run(binaryDirectory: String, package: String?, report: Report, directory: TemporaryDirectory) {
        let section = "footprint"
        for binary in ["pwflagsd", "pwflags"] {
            let copy = directory.file("\(binary).stripped")
            try? FileManager.default.removeItem(atPath: copy)
            guard (try? FileManager.default.copyItem(atPath: binaryDirectory + "/" + binary, toPath: copy)) != nil,
                command(
                    "/usr/bin/strip", ["--remove-section=.comment", "--remove-section=.note", "--strip-unneeded", copy])
                    != nil,
                let size = (try? FileManager.default.attributesOfItem(atPath: copy))?[.size] as? Int
            else { continue }
            let megabytes = Double(size) / 1_000_000
            if binary == "pwflagsd" {
                report.add(section, "\(binary) stripped", megabytes, "MB", target: "≤ 16", met: megabytes <= 16)
            } else {
                report.add(section, "\(binary) stripped", megabytes, "MB")
            }
        }
        guard let package, let text = command("/usr/bin/dpkg-deb", ["-f", package, "Installed-Size"]),
            let kib = Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return }
        report.add(section, "Installed-Size", kib, "KiB", target: "≤ 24576", met: kib <= 24576)
    }

    /// The standard output of `executable arguments`, nil when it fails.
    private static func command(_ executable: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

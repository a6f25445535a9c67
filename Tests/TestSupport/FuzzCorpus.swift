import Foundation

/// The checked-in seed inputs of the protocol fuzzers (`Tests/Fuzz/corpus`), one input per file.
public enum FuzzCorpus {
    /// The corpus folder, found from this source file's place in the repository.
    public static var directory: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Fuzz/corpus")
            .path
    }

    /// Every seed, in file name order; empty when the folder cannot be read.
    public static func seeds(in directory: String = directory) -> [[UInt8]] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().compactMap { name in
            FileManager.default.contents(atPath: directory + "/" + name).map { Array($0) }
        }
    }
}

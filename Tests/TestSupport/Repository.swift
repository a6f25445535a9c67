public import Foundation

/// The repository's root folder, found from this file's place (`Tests/TestSupport/`): the one way a test reaches
/// the files it reads from the tree (config/, docs/, systemd/, Tests/OpenFeature/, the venvs under .build/),
/// wherever in its test target's folders the test itself lives.
public enum Repository {
    /// The folder that holds Package.swift.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The absolute path of `relative` (a path from the root, such as "config/demo.conf").
    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }
}

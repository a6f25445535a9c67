import Foundation
import TestSupport
import Testing

/// A Python venv under `.build` with packages from PyPI at pinned versions, so that a new release cannot change
/// what passes. CI's setup makes each one (`.ci/run`), so that a PyPI outage shows as a setup step; a test makes
/// its venv when it is missing or holds other versions, and fails, not skips, when that cannot be done.
struct PythonVenv: Sendable {
    /// The venv's folder.
    let path: String
    /// `name==version`, each; kept in step with `.ci/run`.
    let packages: [String]
    /// The modules that must import.
    let imports: [String]

    init(_ folder: String, packages: [String], imports: [String]) {
        self.path = Repository.path(".build/" + folder)
        self.packages = packages
        self.imports = imports
    }

    /// The venv's interpreter.
    var python: String { path + "/bin/python" }

    /// The venv's interpreter, with every package importable at its pinned version; the venv is made first when
    /// it is missing or holds other versions.
    func prepared() throws -> String {
        let pins = packages.map { $0.split(separator: "=", omittingEmptySubsequences: true) }
            .map { "('\($0[0])','\($0[1])')" }.joined(separator: ",")
        let check = [
            "-c",
            "import importlib.metadata as m, \(imports.joined(separator: ", ")); "
                + "raise SystemExit(any(m.version(n) != v for n, v in [\(pins)]))",
        ]
        if FileManager.default.isExecutableFile(atPath: python),
            (try? Command.run(python, check, check: false).status) == 0
        {
            return python
        }
        let created = try Command.run("/usr/bin/python3", ["-m", "venv", path], check: false, timeout: .seconds(120))
        try #require(created.status == 0, "python3 -m venv failed (apt-get install python3-venv): \(created)")
        let installed = try Command.run(
            python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"] + packages, check: false,
            timeout: .seconds(300))
        try #require(installed.status == 0, "pip install \(packages) failed: \(installed)")
        try #require(
            try Command.run(python, check, check: false).status == 0, "\(imports) do not import at \(packages)")
        return python
    }
}

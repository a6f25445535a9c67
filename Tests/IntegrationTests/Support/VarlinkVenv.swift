import Foundation
import TestSupport
import Testing

/// The venv with the stock `varlink` package from PyPI (VarlinkPythonTests), in `.build/varlink-venv`: CI's
/// setup makes it (`.ci/run`); the test makes it when it is missing or holds another version, and fails, not
/// skips, when that cannot be done.
enum VarlinkVenv {
    static let venv = Repository.path(".build/varlink-venv")
    /// Kept in step with `.ci/run` and docs/varlink.md.
    static let package = "varlink==31.0.0"

    /// The venv's python with the package importable at its pinned version; made on first use.
    static func python() throws -> String {
        let python = venv + "/bin/python"
        let version = package.split(separator: "=", omittingEmptySubsequences: true).last.map(String.init) ?? ""
        let check = [
            "-c", "import importlib.metadata as m, varlink; raise SystemExit(m.version('varlink') != '\(version)')",
        ]
        if FileManager.default.isExecutableFile(atPath: python),
            (try? Command.run(python, check, check: false).status) == 0
        {
            return python
        }
        let created = try Command.run("/usr/bin/python3", ["-m", "venv", venv], check: false, timeout: .seconds(120))
        try #require(created.status == 0, "python3 -m venv failed (apt-get install python3-venv): \(created)")
        let installed = try Command.run(
            python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", package], check: false,
            timeout: .seconds(300))
        try #require(installed.status == 0, "pip install \(package) failed: \(installed)")
        try #require(try Command.run(python, check, check: false).status == 0, "varlink does not import at \(package)")
        return python
    }
}

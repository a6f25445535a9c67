import Foundation
import TestSupport
import Testing

/// The venv with the stock `varlink` package from PyPI (VarlinkPythonTests), in `.build/varlink-venv`: CI's
/// setup makes it (`.ci/run`); the test makes it when it is missing or holds another version, and fails, not
/// skips, when that cannot be done.
enum VarlinkVenv {
    /// Kept in step with `.ci/run` and docs/varlink.md.
    static let package = "varlink==31.0.0"
    static let venv = PythonVenv("varlink-venv", packages: [package], imports: ["varlink"])

    /// The venv's python with the package importable at its pinned version; made on first use.
    static func python() throws -> String {
        try venv.prepared()
    }
}

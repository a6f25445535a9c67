import FlagsCore
import Foundation
import TestSupport

/// The Python packages the browser and schema tests use, in a venv under `.build/browser-venv`: Selenium, which
/// drives Debian's `chromium` through `chromedriver`, and `jsonschema`, which checks the OFREP listener's output
/// against the protocol's own schemas (`Tests/OpenFeature/ofrep-schemas.json`).
///
/// Made (and the packages installed from PyPI) when missing; CI's setup makes it first, so that a PyPI outage
/// shows as a setup step. A machine without python3's venv or PyPI fails the tests that ask, never skips them.
enum BrowserVenv {
    /// Pinned, so that a new release cannot change what passes (selenium 4.52 asks for a certifi release some
    /// indexes lack; 4.38.0 installs everywhere this runs). Kept in sync with `.ci/run`.
    static let packages = ["selenium==4.38.0", "jsonschema==4.26.0"]

    static let venv = PythonVenv("browser-venv", packages: packages, imports: ["selenium", "jsonschema"])
    static var python: String { venv.python }

    /// The venv with the packages, made when missing.
    static func prepare() throws {
        _ = try venv.prepared()
    }
}

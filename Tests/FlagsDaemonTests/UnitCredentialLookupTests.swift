import FlagsCore
import Foundation
import TestSupport
import Testing

@testable import FlagsDaemon

/// `pwflagsd --check-config` from a shell reads the token where the service's unit loads its credential from.
@Suite(.hangLimit) struct UnitCredentialLookupTests {
    /// Writes `text` at `path` under `root`, creating the directories.
    static func write(_ text: String, at path: String, under root: TemporaryDirectory) throws {
        let full = root.path + path
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: full))
    }

    static let shippedUnit = """
        [Unit]
        Description=Pushwoosh feature flags daemon
        # LoadCredential=pushwoosh-api-token:/commented/out
        [Service]
        LoadCredential=pushwoosh-api-token:/etc/pwflagsd/api-token
        SetCredential=pushwoosh-api-token:\\n
        """

    @Test func theDefaultConfigurationIsRunByPwflagsdServiceWhoseUnitNamesTheFile() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try Self.write(Self.shippedUnit, at: "/usr/lib/systemd/system/pwflagsd.service", under: root)
        let lookup = UnitCredentialLookup(root: root.path)
        #expect(
            lookup.credential(forConfigPath: nil)
                == UnitCredential(unit: "pwflagsd.service", path: "/etc/pwflagsd/api-token"))
        #expect(
            lookup.credential(forConfigPath: "/etc/pwflagsd/pwflagsd.conf")
                == UnitCredential(unit: "pwflagsd.service", path: "/etc/pwflagsd/api-token"))
        // A configuration no unit runs has no credential to look at.
        #expect(lookup.credential(forConfigPath: "/home/me/test.conf") == nil)
        #expect(lookup.credential(forConfigPath: "/etc/pwflagsd/sub/x.conf") == nil)
    }

    @Test func dropInsAndAnEtcCopyWinInSystemdsOrder() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try Self.write(Self.shippedUnit, at: "/usr/lib/systemd/system/pwflagsd.service", under: root)
        try Self.write(
            "[Service]\nLoadCredential=pushwoosh-api-token:/srv/a-token\n",
            at: "/usr/lib/systemd/system/pwflagsd.service.d/10-token.conf", under: root)
        let lookup = UnitCredentialLookup(root: root.path)
        #expect(lookup.credential(forConfigPath: nil)?.path == "/srv/a-token")
        // The same drop-in name in /etc hides the one in /usr/lib; a later name comes after it.
        try Self.write(
            "[Service]\nLoadCredential=pushwoosh-api-token:/srv/etc-token\n",
            at: "/etc/systemd/system/pwflagsd.service.d/10-token.conf", under: root)
        #expect(lookup.credential(forConfigPath: nil)?.path == "/srv/etc-token")
        try Self.write(
            "[Service]\nLoadCredential=\nLoadCredential=other:/x\n",
            at: "/run/systemd/system/pwflagsd.service.d/20-clear.conf", under: root)
        #expect(lookup.credential(forConfigPath: nil) == nil, "an empty LoadCredential= clears the list")
    }

    @Test func anInstanceReadsTheTemplateWithItsNameInThePath() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try Self.write(
            "[Service]\nLoadCredential=pushwoosh-api-token:/etc/pwflagsd/%i.api-token\n",
            at: "/usr/lib/systemd/system/pwflagsd@.service", under: root)
        let lookup = UnitCredentialLookup(root: root.path)
        #expect(
            lookup.credential(forConfigPath: "/etc/pwflagsd/demo.conf")
                == UnitCredential(unit: "pwflagsd@demo.service", path: "/etc/pwflagsd/demo.api-token"))
    }

    @Test func withNoUnitInstalledThePathIsTheShippedUnits() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let lookup = UnitCredentialLookup(root: root.path)
        #expect(lookup.credential(forConfigPath: nil)?.path == "/etc/pwflagsd/api-token")
        #expect(lookup.credential(forConfigPath: "/etc/pwflagsd/net.conf")?.path == "/etc/pwflagsd/net.api-token")
    }

    @Test func checkConfigReadsTheUnitsFileAndSaysWhichWithoutTheToken() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("api-token", "secret-token-value\n")
        let credential = UnitCredential(unit: "pwflagsd.service", path: directory.file("api-token"))
        let text = ConfigurationLoader.renderEffective(Configuration(), environment: [:], unitCredential: credential)
        #expect(!text.contains("secret-token-value"))
        #expect(
            text.contains(
                "\n#APITokenFile= (unset: pwflagsd.service hands the daemon \(credential.path) as its credential)\n"
                    + "# API token (\(credential.path)): set (masked, 18 bytes)\n"), "\(text)")
        // No file there: the service runs with the empty fallback credential, so the token is not set.
        let absent = UnitCredential(unit: "pwflagsd.service", path: directory.file("none"))
        let withoutFile = ConfigurationLoader.renderEffective(
            Configuration(), environment: [:], unitCredential: absent)
        #expect(withoutFile.contains("\n# API token (\(absent.path)): not set\n"), "\(withoutFile)")
        // Under the service ($CREDENTIALS_DIRECTORY set) the credential is what counts, not the unit's source.
        let underService = ConfigurationLoader.renderEffective(
            Configuration(), environment: ["CREDENTIALS_DIRECTORY": "/nonexistent"], unitCredential: credential)
        #expect(underService.contains("# API token: not set\n"), "\(underService)")
    }
}

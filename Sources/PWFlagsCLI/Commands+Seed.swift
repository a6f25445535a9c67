import FlagsCore
import FlagsProtocol
import FoundationEssentials

/// `export-seed`: what the daemon serves now, as the seed a device image ships (`[FeatureFlags] SeedFile=`).
extension Commands {
    func exportSeed() throws(CommandError) -> ExitCode {
        _ = try arguments([], [])
        let status = try request(.status, as: StatusResult.self)
        guard let applicationCode = status.applicationCode else {
            Output.error("the daemon serves no Pushwoosh application (ApplicationCode is empty): nothing to seed")
            return .failure
        }
        let listing = try request(.getAll, as: FlagListing.self)
        let seed = FlagSeed(
            applicationCode: applicationCode, exportedAt: Date().formatted(.iso8601),
            flags: listing.flags.compactMap(Self.seedFlag))
        Output.line(String(decoding: seed.encoded().dropLast(), as: UTF8.self), exact: true)
        return .success
    }

    /// The flag as the application serves it: a local override is this device's alone, so a seed holds the
    /// source's value under it (nothing for a flag the override added).
    static func seedFlag(_ flag: Flag) -> Flag? {
        guard flag.source == .override else { return flag }
        guard let value = flag.sourceValue else { return nil }
        return Flag(key: flag.key, isEnabled: value.isEnabled, ruleId: value.ruleId, properties: value.properties)
    }
}

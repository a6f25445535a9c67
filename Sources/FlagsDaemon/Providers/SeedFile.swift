import FlagsCore
import FlagsProtocol
import UnixIO

/// `[FeatureFlags] SeedFile=`: the flags a device image ships (`pwflags export-seed`), which the Pushwoosh
/// source serves while it has no usable flags of its own, until the first good fetch (`FlagFeed`).
///
/// Trusted as the package is: a file another user could have planted or changed (not root's or the daemon's
/// own, or writable by its group or others) is refused, and so is a seed of another application code.
enum SeedFile {
    /// A seed that may be served, and the file it came from.
    struct Loaded: Sendable {
        let file: String
        let seed: FlagSeed
    }

    /// The biggest seed read, as for an upstream reply.
    static let maximumFileBytes = 8 * 1024 * 1024

    /// Why a seed is not served, in words.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// The seed at `path` when it may be served for `applicationCode`, or why not.
    static func read(_ path: String, applicationCode: String) -> Result<FlagSeed, Refusal> {
        let bytes: [UInt8]
        do {
            bytes = try FileReading.regularFile(ofPath: path, limit: maximumFileBytes, trustedOwner: true)
        } catch {
            return .failure(Refusal(description: "cannot use the SeedFile: \(error)"))
        }
        switch FlagSeed.decode(bytes) {
        case .failure(let problem):
            return .failure(Refusal(description: "the SeedFile \(path) is not a seed: \(problem)"))
        case .success(let seed) where seed.applicationCode != applicationCode:
            return .failure(
                Refusal(
                    description:
                        "the SeedFile \(path) holds the flags of application \(seed.applicationCode), not \(applicationCode)"
                ))
        case .success(let seed):
            return .success(seed)
        }
    }

    /// The configured seed for the Pushwoosh source, or nil: none configured, or refused (said in the log).
    static func load(_ configuration: Configuration, logger: Logger) -> Loaded? {
        guard let path = configuration.seedFile, !configuration.usesLocalSource else { return nil }
        switch read(path, applicationCode: configuration.applicationCode) {
        case .success(let seed):
            logger.info(
                "read the seed flags; they are served until the first fetch when no usable flags are stored",
                ["SEED_FILE": path, "FLAG_COUNT": String(seed.flags.count), "EXPORTED_AT": seed.exportedAt ?? "-"])
            return Loaded(file: path, seed: seed)
        case .failure(let reason):
            logger.warning("\(reason); it is not served", ["SEED_FILE": path, "PWFLAGS_EVENT": "seed-refused"])
            return nil
        }
    }
}

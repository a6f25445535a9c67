/// Where the systemd unit that runs this configuration loads the API token credential from
/// (`LoadCredential=pushwoosh-api-token:PATH`), for `--check-config` run from a shell, which has no
/// `$CREDENTIALS_DIRECTORY`: it reads the file the service will be handed.
public struct UnitCredential: Sendable, Equatable {
    /// The unit, such as `pwflagsd.service` or `pwflagsd@NAME.service`.
    public var unit: String
    /// The credential's source file.
    public var path: String

    public init(unit: String, path: String) {
        self.unit = unit
        self.path = path
    }
}

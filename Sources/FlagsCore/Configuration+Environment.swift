extension Configuration {
    /// The file name systemd's `LoadCredential=` gives the token under `$CREDENTIALS_DIRECTORY`.
    public static let apiTokenCredentialName = "pushwoosh-api-token"

    /// The state directory: the configured one, else `$STATE_DIRECTORY`, else `/var/lib/pwflagsd`.
    ///
    /// systemd sets `$STATE_DIRECTORY` to a colon-separated list when a unit names several; the first is ours.
    public func resolvedStateDirectory(environment: [String: String]) -> String {
        if let stateDirectory { return stateDirectory }
        if let fromSystemd = environment["STATE_DIRECTORY"]?.split(separator: ":").first {
            return String(fromSystemd)
        }
        return Self.defaultStateDirectory
    }

    /// `$CREDENTIALS_DIRECTORY/pushwoosh-api-token`, or nil when systemd passed no credentials.
    public static func credentialTokenPath(environment: [String: String]) -> String? {
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else { return nil }
        return (directory.hasSuffix("/") ? directory : directory + "/") + apiTokenCredentialName
    }

    /// The API token file: the configured one, else the credential when `fileExists` says it is there, else nil.
    ///
    /// `fileExists` keeps this module free of I/O; FlagsDaemon passes a real check.
    public func resolvedAPITokenFile(environment: [String: String], fileExists: (String) -> Bool) -> String? {
        if let apiTokenFile { return apiTokenFile }
        guard let credential = Self.credentialTokenPath(environment: environment), fileExists(credential) else {
            return nil
        }
        return credential
    }

    /// The server the daemon calls when `ServerURL` is unset (``PushwooshAddress/defaultBase(applicationCode:)``).
    ///
    /// Nil when `ApplicationCode` is empty, since the daemon then never calls the network (the parser refuses a
    /// code that is not empty and not valid).
    public var defaultServerURL: String? {
        PushwooshAddress.defaultBase(applicationCode: applicationCode)
    }
}

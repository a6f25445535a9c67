import FlagsCore

extension Configuration {
    /// The API token file: `APITokenFile=`, else `$CREDENTIALS_DIRECTORY/pushwoosh-api-token` if that file
    /// exists, else nil (no token: the daemon can only serve the cache or local flags).
    func resolvedAPITokenFile(environment: [String: String]) -> String? {
        resolvedAPITokenFile(environment: environment, fileExists: ConfigurationLoader.fileExists)
    }
}

/// Configuration text that points the daemon at a fake Pushwoosh server (docs/configuration.md).
public enum PushwooshConfig {
    /// `[Pushwoosh]` with the test application code and HWID and `serverURL`, then `[FeatureFlags]` with the
    /// given keys; every duration not given is long (1h) so that no timer fires during a test by accident, and
    /// the fleet spread is off (`RefreshSpread=0`, `SessionStartDelay=0`, the SDK's timing) unless a test sets it.
    public static func text(
        serverURL: String,
        applicationCode: String = "ABCDE-12345",
        pushwoosh: [String: String] = [:],
        featureFlags: [String: String] = [:]
    ) -> String {
        var flags: [String: String] = [
            "RefreshInterval": "1h", "RefreshThrottle": "1h", "RetryBackoff": "1h", "CacheMaxAge": "1h",
            "SessionTimeout": "1h", "SessionMaxAge": "1h", "RefreshSpread": "0", "SessionStartDelay": "0",
        ]
        flags.merge(featureFlags) { $1 }
        var text = "[Pushwoosh]\nApplicationCode=\(applicationCode)\nServerURL=\(serverURL)\nHWID=test-hwid\n"
        for (key, value) in pushwoosh.sorted(by: { $0.key < $1.key }) { text += "\(key)=\(value)\n" }
        text += "[FeatureFlags]\n"
        for (key, value) in flags.sorted(by: { $0.key < $1.key }) { text += "\(key)=\(value)\n" }
        return text
    }
}

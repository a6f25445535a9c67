/// The pwflagsd release, sent upstream as `v` and `User-Agent`, and reported by `status` and `--version`.
public enum PWFlagsVersion {
    public static let current = "0.1.0"
}

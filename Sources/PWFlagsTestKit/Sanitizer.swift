#if canImport(Glibc)
    import Glibc
#endif

/// Whether the tests (and so the daemon, built alike) run under a sanitizer.
public enum Sanitizer {
    /// True under AddressSanitizer or ThreadSanitizer, whose quarantine and shadow memory make resident-memory
    /// figures meaningless: memory bounds are checked only without them.
    public static let isActive: Bool = dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil
}

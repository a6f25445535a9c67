// A release build (systemd/build-release.sh) builds this target too, where Swift Testing is not on the search
// path: the limits exist only where tests can run.
#if canImport(Testing)
    public import Testing
    import Foundation

    /// How long a test may run before it fails by itself: every suite carries one of these (docs/development.md).
    ///
    /// Swift Testing records the failure when the limit passes and cancels the test; the test kit's waits (socket
    /// reads, `Eventually`, a daemon's exit) then give up at once, so the test ends with its failures listed
    /// instead of holding the run until CI's job timeout.
    extension Trait where Self == TimeLimitTrait {
        /// Far past what any test takes (the slowest, the benchmark's smoke run, 30 s in a plain run): only a hang
        /// reaches it.
        public static var hangLimit: Self { .timeLimit(.minutes(5)) }

        /// A fuzz suite's limit: the hang limit plus the fuzzing time `variable` asks for (a long local run).
        public static func hangLimit(fuzzingFor variable: String) -> Self {
            let seconds = ProcessInfo.processInfo.environment[variable].flatMap(Double.init) ?? 0
            return .timeLimit(.minutes(5 + Int((max(0, seconds) / 60).rounded(.up))))
        }
    }
#endif

// A release build (systemd/build-release.sh) builds this target too, where Swift Testing is not on the search
// path: the hook exists only where tests can run.
#if canImport(Testing)
    import Testing

    /// Records a problem the test kit found when it stopped a daemon (`DaemonExitCheck`) as a failure of the
    /// running test. The kit finds this function by its C name at run time: it is linked into the bench and soak
    /// too, which have no Swift Testing, so it cannot call `Issue.record` itself.
    @_cdecl("pwflags_test_kit_record_issue")
    public func recordDaemonIssue(_ message: UnsafePointer<CChar>) {
        Issue.record(Comment(rawValue: String(cString: message)))
    }
#endif

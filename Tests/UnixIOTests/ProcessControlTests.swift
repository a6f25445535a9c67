import TestSupport
import Testing
import UnixIO

/// `prctl` on the process itself. (The malloc settings, `limitMallocArenas` and `setMallocMmapThreshold`, are
/// checked with what they are for, in FlagsDaemonTests' `MallocTuningTests`.)
@Suite(.hangLimit) struct ProcessControlTests {
    @Test func dumpableIsWhatWasLastSet() throws {
        let before = ProcessControl.isDumpable
        defer { try? ProcessControl.setDumpable(before) }
        try ProcessControl.setDumpable(false)
        #expect(!ProcessControl.isDumpable)
        try ProcessControl.setDumpable(true)
        #expect(ProcessControl.isDumpable)
    }
}

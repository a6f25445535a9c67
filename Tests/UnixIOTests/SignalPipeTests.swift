import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The self-pipe that turns signals into bytes.
@Suite(.hangLimit) struct SignalPipeTests {
    @Test("A caught signal comes out of the pipe as its number, once; nothing more waits after it")
    func deliversSignals() throws {
        // SIGUSR2 is used by nothing else in the test process; its handler stays for the process's life.
        let pipe = try SignalPipe(catching: [SIGUSR2])
        #expect(pipe.readSignals().isEmpty)
        // To the process, not this thread: the test runner's threads block most signals, so the kernel hands it
        // to one that does not, as it does in the daemon.
        kill(getpid(), SIGUSR2)
        #expect(Descriptor.waitReadable(pipe.readDescriptor, milliseconds: 5000))
        #expect(pipe.readSignals() == [SIGUSR2])
        #expect(pipe.readSignals().isEmpty)
    }
}

import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Who may have planted or changed a file the daemon takes state from: root or the daemon's user, and a mode that
/// neither its group nor others may write.
@Suite(.hangLimit) struct TrustedOwnerTests {
    @Test func rootAndTheDaemonsUserWithAPrivateModeAreTrusted() {
        #expect(TrustedOwner.problem(owner: 0, mode: 0o700, euid: 1000) == nil)
        #expect(TrustedOwner.problem(owner: 1000, mode: 0o644, euid: 1000) == nil)
    }

    @Test func anotherOwnerOrAWritableModeIsAProblemThatSaysWhich() {
        #expect(TrustedOwner.problem(owner: 1001, mode: 0o700, euid: 1000)?.contains("uid 1001") == true)
        #expect(TrustedOwner.problem(owner: 0, mode: 0o770, euid: 1000)?.contains("0770") == true)
        #expect(TrustedOwner.problem(owner: 1000, mode: 0o702, euid: 1000)?.contains("others") == true)
    }

    @Test func aDescriptorIsJudgedByWhatFstatSays() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("state", "x")
        let fd = open(directory.file("state"), O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(fchmod(fd, 0o600) == 0)
        #expect(TrustedOwner.problem(descriptor: fd) == nil)
        #expect(fchmod(fd, 0o666) == 0)
        #expect(TrustedOwner.problem(descriptor: fd) != nil)
        #expect(TrustedOwner.problem(descriptor: -1)?.contains("fstat") == true)
    }

    @Test func aParentOthersMayWriteNeedsTheStickyBit() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let shared = directory.file("shared")
        try #require(mkdir(shared, 0o700) == 0)
        #expect(chmod(directory.path, 0o700) == 0)
        #expect(TrustedOwner.parentsProblem(of: shared + "/state") == nil)
        #expect(chmod(shared, 0o777) == 0)
        #expect(TrustedOwner.parentsProblem(of: shared + "/state")?.contains("sticky") == true)
        #expect(chmod(shared, 0o1777) == 0)
        #expect(TrustedOwner.parentsProblem(of: shared + "/state") == nil)
    }
}

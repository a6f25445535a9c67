#if canImport(Glibc)
    import Glibc
#endif

/// Whether the tests (and so the daemon, built alike) run under a sanitizer.
public enum Sanitizer {
    /// True under AddressSanitizer or ThreadSanitizer, whose quarantine and shadow memory make resident-memory
    /// figures meaningless: memory bounds are checked only without them.
    public static let isActive: Bool = dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil
}

/// Whether the daemon under test runs under qemu-user (`systemd/cross/test-qemu.sh` points `PWFLAGS_PRODUCTS` at
/// another architecture's build): each of its calls then costs several times as much, as under a sanitizer.
public enum Emulation {
    public static let isActive: Bool = {
        guard let file = fopen(DaemonProcess.executable("pwflagsd"), "r") else { return false }
        defer { fclose(file) }
        // The ELF header's e_machine, at offset 18, against this process's own.
        var header = [UInt8](repeating: 0, count: 20)
        guard fread(&header, 1, 20, file) == 20, header.starts(with: [0x7F, 0x45, 0x4C, 0x46]) else { return false }
        #if arch(x86_64)
            let native: UInt16 = 62
        #elseif arch(arm64)
            let native: UInt16 = 183
        #else
            return false
        #endif
        return UInt16(header[18]) | UInt16(header[19]) << 8 != native
    }()
}

import CSystemd
import FoundationEssentials
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Every libsystemd call the daemon makes, in one place, handing back Swift types.
enum Systemd {
    /// Sends a state string to the service manager; a no-op when `$NOTIFY_SOCKET` is not set.
    ///
    /// Not `sd_notify`, whose blocking send would stall the caller while the manager does not read.
    static func notify(_ state: String) {
        notifier.send(state)
    }

    private static let notifier = ManagerNotifier(environment: ProcessInfo.processInfo.environment)

    /// `READY=1`, with a status line.
    static func notifyReady(status: String) {
        notify("READY=1\nSTATUS=\(status.singleLine)")
    }

    /// `STATUS=…`, the line `systemctl status` shows.
    static func notifyStatus(_ status: String) {
        notify("STATUS=\(status.singleLine)")
    }

    /// `STOPPING=1`, with a status line saying why (`systemctl status` shows it while the daemon stops).
    static func notifyStopping(status: String = "Shutting down") {
        // One line: a line break would end the STATUS= field and start a field of its own.
        let line = status.split(whereSeparator: \.isNewline).joined(separator: " ")
        notify("STOPPING=1\nSTATUS=\(line)")
    }

    /// `RELOADING=1` with the `MONOTONIC_USEC` systemd 253+ expects; older managers ignore the extra field.
    static func notifyReloading() {
        let microseconds = MonotonicClock.nanoseconds() / 1000
        notify("RELOADING=1\nMONOTONIC_USEC=\(microseconds)")
    }

    /// `WATCHDOG=1`.
    static func notifyWatchdog() {
        notify("WATCHDOG=1")
    }

    /// The watchdog interval the manager expects pings within, or nil when the watchdog is off.
    static func watchdogInterval() -> Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(microseconds))
    }

    /// The name a socket unit gives the OFREP listener (`FileDescriptorName=ofrep`).
    static let ofrepDescriptorName = "ofrep"
    /// The name a socket unit gives the Varlink listener (`FileDescriptorName=varlink`).
    static let varlinkDescriptorName = "varlink"

    /// The listening sockets passed by socket activation (`LISTEN_FDS`, `LISTEN_FDNAMES`): the line protocol's
    /// Unix stream sockets (any name but `ofrep` and `varlink`, checked with `sd_is_socket_unix`), the OFREP
    /// listener (the stream socket named `ofrep`, Unix or TCP), the Varlink listener (the Unix stream socket
    /// named `varlink`), and the rest, rejected. All empty without activation.
    static func activatedSockets() -> (sockets: [Int32], rejected: [Int32], ofrep: [Int32], varlink: [Int32]) {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        defer {
            if let names {
                for index in 0..<Int(max(count, 0)) { free(names[index]) }
                free(names)
            }
        }
        guard count > 0 else { return ([], [], [], []) }
        var sockets: [Int32] = []
        var rejected: [Int32] = []
        var ofrep: [Int32] = []
        var varlink: [Int32] = []
        for index in 0..<count {
            let fd = SD_LISTEN_FDS_START + index
            let name = names?[Int(index)].map { String(cString: $0) } ?? ""
            if name == ofrepDescriptorName {
                if sd_is_socket(fd, AF_UNSPEC, Int32(SOCK_STREAM.rawValue), 1) > 0 {
                    ofrep.append(fd)
                } else {
                    rejected.append(fd)
                }
            } else if sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 {
                if name == varlinkDescriptorName { varlink.append(fd) } else { sockets.append(fd) }
            } else {
                rejected.append(fd)
            }
        }
        return (sockets, rejected, ofrep, varlink)
    }

    /// The application-specific machine id (`sd_id128_get_machine_app_specific`): 32 hex digits, stable
    /// across restarts, and not the machine id itself. Nil when the machine has no `/etc/machine-id`.
    static func machineAppSpecificID() -> String? {
        var result = sd_id128_t()
        guard sd_id128_get_machine_app_specific(applicationID, &result) == 0 else { return nil }
        return hex(result)
    }

    /// This boot's id (`sd_id128_get_boot`, the same as `/proc/sys/kernel/random/boot_id`): 32 hex digits that
    /// change at every boot, so that a disk cache written in this boot is told from one of an earlier boot.
    static func bootID() -> String? {
        var result = sd_id128_t()
        guard sd_id128_get_boot(&result) == 0 else { return nil }
        return hex(result)
    }

    private static func hex(_ id: sd_id128_t) -> String {
        withUnsafeBytes(of: id.bytes) { raw in
            raw.map { byte in
                let hex = Array("0123456789abcdef")
                return String([hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            }.joined()
        }
    }

    /// True when stderr is the journal's stream (`$JOURNAL_STREAM` names its device and inode), so that log
    /// entries can go to the journal with their fields instead of as plain lines.
    static func stderrIsJournal(environment: [String: String]) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// Sends one journal entry with `PRIORITY`, `MESSAGE`, `SYSLOG_IDENTIFIER` and the given fields
    /// (`sd_journal_sendv`: the variadic `sd_journal_send` cannot be called from Swift).
    static func journalSend(priority: Int, message: String, fields: [(String, String)]) {
        var entries: [[UInt8]] = [
            Array("PRIORITY=\(priority)".utf8), Array("MESSAGE=\(message)".utf8),
            Array("SYSLOG_IDENTIFIER=pwflagsd".utf8),
        ]
        for (name, value) in fields { entries.append(Array("\(name)=\(value)".utf8)) }
        // One buffer holds every field, so that each iovec points at memory that stays put during the call.
        let total = entries.reduce(0) { $0 + $1.count }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(total, 1), alignment: 1)
        defer { storage.deallocate() }
        var vectors: [iovec] = []
        vectors.reserveCapacity(entries.count)
        var offset = 0
        for entry in entries {
            let slice = UnsafeMutableRawBufferPointer(rebasing: storage[offset..<(offset + entry.count)])
            slice.copyBytes(from: entry)
            vectors.append(iovec(iov_base: slice.baseAddress, iov_len: entry.count))
            offset += entry.count
        }
        _ = vectors.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
    }

    /// pwflagsd's own application id (generated once with `systemd-id128 new`); changing it changes every HWID.
    private static let applicationID: sd_id128_t = {
        var id = sd_id128_t()
        let bytes: [UInt8] = [
            0x5c, 0x3e, 0x8a, 0x41, 0x0f, 0x2d, 0x4b, 0x96, 0xa7, 0x1e, 0x63, 0xd2, 0x98, 0x0b, 0x7f, 0x25,
        ]
        withUnsafeMutableBytes(of: &id.bytes) { raw in raw.copyBytes(from: bytes) }
        return id
    }()
}

extension String {
    /// The status protocol is line-based: a newline would end the field early.
    fileprivate var singleLine: String {
        String(map { $0.isNewline ? " " : $0 })
    }
}

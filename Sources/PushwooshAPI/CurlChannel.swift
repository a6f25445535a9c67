import CCurl
import UnixIO

/// One libcurl easy handle in a multi handle of its own, reused from one exchange to the next.
///
/// The multi handle keeps the connection cache, so the next exchange on a channel reuses the open connection;
/// and its wakeup ends a wait at once, which is how a reload or the daemon's stop cancels an exchange. Every
/// call on the handles happens on the one thread running the exchange, except `wake()`, which libcurl allows
/// from any thread.
final class CurlChannel: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    let multi: UnsafeMutableRawPointer

    /// Why no channel can be made: libcurl is not loadable or not initialised (loaded on the first call), or a
    /// handle could not be made.
    struct Unavailable: Error {
        var reason: String
    }

    /// Loads libcurl on the first call in the process (CCurl.h says why it is not linked).
    init() throws(Unavailable) {
        guard pwflags_curl_load() != 0 else {
            throw Unavailable(reason: "libcurl cannot be loaded: " + String(cString: pwflags_curl_load_error()))
        }
        guard let easy = pwflags_curl_easy_init() else { throw Unavailable(reason: "libcurl made no easy handle") }
        guard let multi = pwflags_curl_multi_init() else {
            pwflags_curl_easy_cleanup(easy)
            throw Unavailable(reason: "libcurl made no multi handle")
        }
        self.easy = easy
        self.multi = multi
    }

    deinit {
        pwflags_curl_multi_cleanup(multi)
        pwflags_curl_easy_cleanup(easy)
    }

    /// Ends the current `curl_multi_poll` wait at once.
    func wake() {
        _ = pwflags_curl_multi_wakeup(multi)
    }
}

/// The channels not in use, at most a few: one is enough for the daemon's calls, which rarely overlap.
final class CurlChannelPool: Sendable {
    private let idle = Locked<[CurlChannel]>([])
    private let capacity: Int

    init(capacity: Int = 2) {
        self.capacity = capacity
    }

    /// An idle channel, or a new one.
    func take() throws(CurlChannel.Unavailable) -> CurlChannel {
        if let channel = idle.withLock({ $0.popLast() }) { return channel }
        return try CurlChannel()
    }

    /// Keeps `channel` (and its open connection) for the next exchange, unless enough are kept already.
    func give(back channel: CurlChannel) {
        idle.withLock { channels in
            if channels.count < capacity { channels.append(channel) }
        }
    }
}

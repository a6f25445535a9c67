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

    /// False when libcurl could not be initialised or a handle not be made.
    private static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    init?() {
        guard Self.initialized, let easy = curl_easy_init() else { return nil }
        guard let multi = curl_multi_init() else {
            curl_easy_cleanup(easy)
            return nil
        }
        self.easy = easy
        self.multi = multi
    }

    deinit {
        curl_multi_cleanup(multi)
        curl_easy_cleanup(easy)
    }

    /// Ends the current `curl_multi_poll` wait at once.
    func wake() {
        _ = curl_multi_wakeup(multi)
    }
}

/// The channels not in use, at most a few: one is enough for the daemon's calls, which rarely overlap.
final class CurlChannelPool: Sendable {
    private let idle = Locked<[CurlChannel]>([])
    private let capacity: Int

    init(capacity: Int = 2) {
        self.capacity = capacity
    }

    /// An idle channel, or a new one; nil when libcurl cannot make one.
    func take() -> CurlChannel? {
        idle.withLock { $0.popLast() } ?? CurlChannel()
    }

    /// Keeps `channel` (and its open connection) for the next exchange, unless enough are kept already.
    func give(back channel: CurlChannel) {
        idle.withLock { channels in
            if channels.count < capacity { channels.append(channel) }
        }
    }
}

/// The fleet's timing (F1): a device's phase and its slots (the hold of F3 is `RefreshBackoff`'s).
extension RefreshPolicy {
    /// A stable phase in [0, 1) for a device id: FNV-1a over its bytes, so every device of a fleet gets its own
    /// and keeps it across restarts.
    public static func phase(forDevice id: String) -> Double {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        // Mix the high bits down: FNV's low bits are weak for short, similar ids.
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        return Double(hash >> 11) / Double(UInt64(1) << 53)
    }

    /// The first of the device's slots at or after `time` (F1): `phase × spread` past a multiple of the spread.
    public func slot(atOrAfter time: Double) -> Double {
        let spread = settings.effectiveSpread
        guard spread > 0, time.isFinite else { return time }
        let offset = phase * spread
        // The small margin keeps a time that is a slot (up to rounding) on that slot.
        let count = ((time - offset) / spread - 1e-9).rounded(.up)
        return max(time, offset + count * spread)
    }

    /// When the interval refresh after a complete response at `completeAt` is due (R8b, F1): the first slot
    /// `RefreshInterval` after the request that brought it was sent. A request sent up to a tenth of the spread
    /// after a slot (a timer wakes a little late, a reply takes its time) counts as sent on that slot, so that
    /// the device keeps its slot instead of skipping to the next one.
    public func intervalDue(after completeAt: Double) -> Double {
        var anchor = completeAt
        let spread = settings.effectiveSpread
        if spread > 0, let sent = lastCompleteSentAt, sent <= completeAt, completeAt - sent < settings.refreshInterval {
            let recentSlot = slot(atOrAfter: sent - spread / 10)
            anchor = recentSlot <= sent ? recentSlot : sent
        }
        return slot(atOrAfter: anchor + settings.refreshInterval)
    }
}

import FeatureFlags

#if canImport(Glibc)
    import Glibc
#endif

/// The seed's checkout screen, printing what it would show.
final class CheckoutScreen: FeatureFlagsUpdateListener {
    let flags: FeatureFlags

    init(flags: FeatureFlags) {
        self.flags = flags
    }

    /// Shows the new or the old checkout, as the SDK page's example does.
    func render() {
        if let checkout = flags.get("new_checkout"), checkout.isEnabled {
            showNewCheckout(
                buttonColor: checkout.string(forProperty: "button_color", default: "blue") ?? "blue",
                maxItems: Int(checkout.number(forProperty: "max_items", default: 3))
            )
        } else {
            showOldCheckout()
        }
        // The comparison group counts too: log the impression in both branches (R17).
        flags.logImpression("new_checkout")
        let isSearchV2 = flags.isEnabled("search_v2", default: false)
        Self.say("search: \(isSearchV2 ? "v2" : "v1")")
    }

    func featureFlagsDidUpdate() {
        Self.say("flags updated")
        render()
    }

    private func showNewCheckout(buttonColor: String, maxItems: Int) {
        Self.say("new checkout: button \(buttonColor), at most \(maxItems) items")
    }

    private func showOldCheckout() {
        Self.say("old checkout")
    }

    /// Writes a line straight to stdout (or `descriptor`): unbuffered, so that a reader of a pipe sees it with
    /// `--follow`.
    static func say(_ line: String, to descriptor: Int32 = 1) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}

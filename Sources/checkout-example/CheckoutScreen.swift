import FeatureFlags
import Foundation

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

    /// Writes a line straight to stdout: unbuffered, so that a reader of a pipe sees it with `--follow`.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

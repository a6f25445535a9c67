import Dispatch
import FeatureFlags
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

// The seed's checkout example on Linux: checkout-example [--socket PATH] [--follow]
var socketPath: String?
var follow = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--socket":
        socketPath = arguments.popFirst()
    case "--follow":
        follow = true
    default:
        CheckoutScreen.say("usage: checkout-example [--socket PATH] [--follow]", to: 2)
        exit(2)
    }
}
let flags =
    socketPath.map { FeatureFlags(socketPath: $0) }
    ?? FeatureFlags(socketPath: SocketLocation.resolve(environment: ProcessInfo.processInfo.environment))
if await !flags.waitForFirstSnapshot(timeout: .seconds(5)) {
    CheckoutScreen.say("no flags from pwflagsd at \(flags.socketPath); showing the defaults", to: 2)
}
let screen = CheckoutScreen(flags: flags)
screen.render()
if follow {
    // Listeners run on the main queue, which runs only inside dispatchMain() on Linux.
    flags.addUpdateListener(screen)
    withExtendedLifetime(screen) { dispatchMain() }
}
flags.stop()

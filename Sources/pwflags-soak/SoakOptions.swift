/// The command line of pwflags-soak.
struct SoakOptions {
    /// How long the load runs, warm-up included.
    var seconds = 600
    /// Where to write the figures as JSON.
    var jsonPath: String?
    /// `get`, `isEnabled` and `getAll` calls per second, over all getter threads.
    var rate = 2_000
    /// Getter threads, each on a connection of its own.
    var getters = 4
    /// Flags in the file at start; changes keep the count within a quarter of it.
    var flags = 200
    /// Subscribers kept open at once, between these bounds.
    var minimumSubscribers = 4
    var maximumSubscribers = 16
    /// The daemon's `IdleConnectionTimeout` in seconds; nil keeps its default (5 min). A short one shows, in a
    /// short run, that no connection of the soak's sits idle past it.
    var idleTimeout: Int?
    /// The seed of every random choice.
    var seed = UInt64.random(in: 1...UInt64(UInt32.max))

    static let usage = """
        Usage: pwflags-soak [--seconds N] [--json PATH] [--rate N] [--getters N] [--flags N] [--seed N]
                            [--idle-timeout SECONDS]
        Runs the pwflagsd built next to it under steady load, flag changes and subscriber churn, then checks
        memory, descriptors and every subscriber's flags; exits 0 on PASS. See docs/reliability.md.
        """

    /// Reads the arguments (without the program name); throws the usage on anything it does not know.
    init(arguments: [String]) throws(SoakUsageError) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard argument != "--help" else { throw SoakUsageError(message: nil) }
            guard let value = remaining.popFirst() else {
                throw SoakUsageError(message: "\(argument) needs a value")
            }
            switch argument {
            case "--json": jsonPath = value
            case "--seconds": seconds = try Self.number(value, for: argument, minimum: 3)
            case "--rate": rate = try Self.number(value, for: argument, minimum: 1)
            case "--getters": getters = try Self.number(value, for: argument, minimum: 1)
            case "--flags": flags = try Self.number(value, for: argument, minimum: 8)
            case "--idle-timeout": idleTimeout = try Self.number(value, for: argument, minimum: 1)
            case "--seed":
                guard let seed = UInt64(value) else { throw SoakUsageError(message: "invalid --seed '\(value)'") }
                self.seed = seed
            default: throw SoakUsageError(message: "unknown option '\(argument)'")
            }
        }
    }

    private static func number(_ text: String, for option: String, minimum: Int) throws(SoakUsageError) -> Int {
        guard let value = Int(text), value >= minimum else {
            throw SoakUsageError(message: "\(option) wants a whole number of at least \(minimum), not '\(text)'")
        }
        return value
    }
}

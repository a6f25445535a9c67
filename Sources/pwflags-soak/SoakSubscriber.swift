/// A subscriber the churn opens and closes: a raw `listen` connection or a `FeatureFlags` mirror.
protocol SoakSubscriber: AnyObject, Sendable {
    /// A name for messages: its kind and number.
    var name: String { get }
    /// Connections it holds to the daemon now.
    var connections: Int { get }
    /// Ends the subscription and closes its connection; returns once it has.
    func close()
    /// Nil when its flags equal `getAll`'s final ones (restricted to its keys), else what differs.
    func difference(from final: FinalFlags) -> String?
    /// Checks every state it went through against the history; returns the number of states checked and of
    /// states whose revision the history lacks.
    func verifyStates(against history: FlagHistory, tally: Tally) -> (checked: Int, unknown: Int)
}

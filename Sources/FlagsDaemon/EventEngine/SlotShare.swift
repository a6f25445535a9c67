/// Who may take a slot of a listener: a rule the flag service sets (`ConnectionShare`), which the engine applies
/// to each connection it admits and is told of as each one closes. Owned by the event loop's thread.
protocol SlotShare {
    /// Whether a connection of `uid` may open now, `capacity` being the listener's limit.
    func admits(_ uid: UInt32, capacity: Int) -> Bool
    /// The most slots one user may hold, for the refusal's log line.
    func perUser(of capacity: Int) -> Int
    mutating func opened(_ uid: UInt32?)
    mutating func closed(_ uid: UInt32?)
}

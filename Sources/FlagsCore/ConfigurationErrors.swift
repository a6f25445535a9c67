/// Every problem found while loading the configuration, in the order the sources were read.
public struct ConfigurationErrors: Error, Sendable, Equatable, CustomStringConvertible {
    /// Never empty when thrown or returned as a failure.
    public var problems: [ConfigurationProblem]

    public init(_ problems: [ConfigurationProblem]) {
        self.problems = problems
    }

    /// One problem per line, ready for stderr or the journal.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

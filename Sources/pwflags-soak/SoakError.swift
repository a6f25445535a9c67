/// A step of the soak that could not be carried out at all (as opposed to a failed check, which `Tally` counts).
struct SoakError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}

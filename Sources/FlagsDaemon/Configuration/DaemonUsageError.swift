import FlagsCore

/// A command line pwflagsd cannot run with: the one error of its option parsing, which `main` prints with a
/// pointer to `--help` before it exits 2.
///
/// `code` says what kind of mistake it is and `message` says it in one line; a usage error has no cause beyond
/// the command line itself.
public enum DaemonUsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An option pwflagsd does not have, such as `--frobnicate`.
    case unknownOption(String)
    /// A word that is not an option; pwflagsd takes no arguments.
    case unexpectedArgument(String)
    /// An option that needs a value came last, or before another option.
    case missingValue(option: String)
    /// An option was given an empty value.
    case emptyValue(option: String)
    /// An option that takes no value was given one (`--help=me`).
    case unexpectedValue(option: String)

    /// The kind of mistake, for programs and tests to branch on; more may come.
    typealias Code = ErrorCode<DaemonUsageError>

    var code: Code {
        switch self {
        case .unknownOption: .unknownOption
        case .unexpectedArgument: .unexpectedArgument
        case .missingValue, .emptyValue: .missingValue
        case .unexpectedValue: .unexpectedValue
        }
    }

    /// What is wrong, in one line, such as `unknown option '--frobnicate'`.
    public var message: String {
        switch self {
        case .unknownOption(let name): "unknown option '\(name)'"
        case .unexpectedArgument(let argument): "unexpected argument '\(argument)'"
        case .missingValue(let option): "option '\(option)' needs a value"
        case .emptyValue(let option): "option '\(option)' needs a non-empty value"
        case .unexpectedValue(let option): "option '\(option)' takes no value"
        }
    }

    public var description: String { message }
}

extension ErrorCode where Domain == DaemonUsageError {
    static var unknownOption: Self { Self("unknownOption") }
    static var unexpectedArgument: Self { Self("unexpectedArgument") }
    /// A value is missing or empty.
    static var missingValue: Self { Self("missingValue") }
    static var unexpectedValue: Self { Self("unexpectedValue") }
}

import FlagsCore

/// The format of the JSON files in the state directory, so that a daemon can tell a file a newer version wrote
/// in a way it would misread (docs/operations.md, Rolling back; docs/decisions.md, State across versions).
///
/// Each JSON file carries `format`, a whole number. Its writer raises it only when a reader of the previous number
/// would misread the file; a member added for newer readers leaves it alone, since every reader ignores members it
/// does not know. A file without `format` was written before the file had one: format 1. A daemon reads every
/// format up to its `newest` and sets aside (`StateDirectory.setAside`) a file of a newer one, unread.
///
/// The user id (`user-id`) and the HWID (`hwid`) are plain text in every version, without a format: any version,
/// older or newer, reads them, so that a rollback never changes who the device is.
struct StateFormat: Sendable, Equatable {
    /// The file's name in the state directory.
    let file: String
    /// The newest format this daemon reads, and the one it writes.
    let newest: Int

    /// The file's format when it is newer than this daemon reads; nil when it is one this daemon reads, or when
    /// `format` is not a whole number (then the file's own reader judges it).
    func newer(in value: JSONValue) -> Int? {
        guard let format = value["format"]?.integerValue, format > newest else { return nil }
        return format
    }
}

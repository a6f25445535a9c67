/// A command line pwflags-soak does not understand; nil `message` for `--help`.
struct SoakUsageError: Error {
    var message: String?
}

import UnixIO

extension StateDirectory {
    /// The name a file set aside takes, beside it: no version of the daemon reads it.
    static func setAsideName(_ name: String) -> String { name + ".set-aside" }

    /// Sets aside a file a newer version wrote in a format this daemon does not read (`StateFormat`): renamed to
    /// `NAME.set-aside` (replacing one set aside before), so that nothing is read from it and the operator finds
    /// it, and logged. The caller goes on as if the file were missing. A rename that fails is logged too; the file
    /// is still not read, and this daemon's next write of it replaces it.
    func setAside(_ format: StateFormat, found: Int, logger: Logger) {
        let aside = Self.setAsideName(format.file)
        let what = "\(format.file) has format \(found); this pwflagsd reads up to \(format.newest)"
        do {
            try AtomicFile.rename(format.file, to: aside, in: path)
            logger.warning(
                "set aside a state file a newer pwflagsd wrote: \(what); it is kept as \(aside) and not used",
                [
                    "STATE_FILE": file(format.file), "STATE_FORMAT": String(found),
                    "PWFLAGS_EVENT": "state-set-aside",
                ])
        } catch {
            logger.warning(
                "a state file a newer pwflagsd wrote is not used: \(what); it cannot be set aside (\(error))",
                [
                    "STATE_FILE": file(format.file), "STATE_FORMAT": String(found),
                    "PWFLAGS_EVENT": "state-set-aside",
                ])
        }
    }
}

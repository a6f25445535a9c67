import FlagsCore
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

extension ConfigurationLoader {
    /// API token files larger than this are refused: the token goes into every request's `Authorization` header,
    /// and Pushwoosh's are under a hundred bytes, so a larger file is the wrong file (a log, `/dev/zero`).
    static let maximumAPITokenBytes = 4096

    /// The API token in the file at `path`, as bytes, without the blanks and line ends around it (token files
    /// usually end with a newline); empty when the file holds none. The read is bounded (`FileReading`): a file
    /// over `maximumAPITokenBytes` is refused before it is kept, and the failure names the file, never what it
    /// holds.
    static func readAPIToken(atPath path: String) -> Result<[UInt8], ReadError> {
        let bytes: [UInt8]
        do {
            bytes = try FileReading.contents(ofPath: path, limit: maximumAPITokenBytes)
        } catch  where error.errno == EFBIG {
            return .failure(ReadError(code: EFBIG, reason: "larger than \(maximumAPITokenBytes) bytes"))
        } catch {
            return .failure(ReadError(code: error.errno))
        }
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        return .success(Array(bytes.drop(while: isBlank).reversed().drop(while: isBlank).reversed()))
    }

    /// What the API token file holds, for `--check-config`; the token is read, measured and dropped.
    ///
    /// `unitCredential`: the file the service's unit hands the daemon, read when neither `APITokenFile` nor
    /// `$CREDENTIALS_DIRECTORY` names one.
    static func apiTokenStatus(
        of configuration: Configuration, environment: [String: String], unitCredential: UnitCredential? = nil
    ) -> APITokenStatus {
        let fromUnit = Configuration.credentialTokenPath(environment: environment) == nil ? unitCredential?.path : nil
        guard let path = configuration.resolvedAPITokenFile(environment: environment) ?? fromUnit else {
            return .missing
        }
        // The unit's source may be absent: the service then gets the empty fallback (SetCredential=).
        if path == fromUnit, configuration.apiTokenFile == nil, !fileExists(path) { return .missing }
        switch readAPIToken(atPath: path) {
        case .success(let bytes): return bytes.isEmpty ? .missing : .present(byteCount: bytes.count)
        case .failure(let error): return .unreadable(reason: error.reason)
        }
    }
}

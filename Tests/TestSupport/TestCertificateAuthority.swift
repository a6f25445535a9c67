/// A throw-away certificate authority made by a test with `openssl`, and the server certificates it signs.
public final class TestCertificateAuthority: Sendable {
    /// A server certificate and its key, as PEM files.
    public struct Certificate: Sendable {
        public let certificatePath: String
        public let keyPath: String
    }

    /// The CA's certificate, the bundle a client must trust.
    public let certificatePath: String
    private let keyPath: String
    private let directory: TemporaryDirectory

    /// A new CA named `name`, valid for a day.
    public init(name: String = "pwflagsd test CA") throws {
        directory = try TemporaryDirectory(prefix: "pwca")
        certificatePath = directory.file("ca.pem")
        keyPath = directory.file("ca.key")
        try Command.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                "-subj", "/CN=\(name)", "-keyout", keyPath, "-out", certificatePath,
            ])
    }

    /// A server certificate for `names` (DNS names, or IP addresses) signed by this CA.
    public func issue(for names: [String] = ["localhost", "*.api.pushwoosh.com"], file: String = "server")
        throws -> Certificate
    {
        let key = directory.file("\(file).key")
        let request = directory.file("\(file).csr")
        let certificate = directory.file("\(file).pem")
        let extensions = directory.file("\(file).ext")
        let alternatives = names.map { ($0.first?.isNumber == true ? "IP:" : "DNS:") + $0 }
        try directory.write("\(file).ext", "subjectAltName=\(alternatives.joined(separator: ","))\n")
        try Command.run(
            "/usr/bin/openssl",
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj",
                "/CN=\(names.first ?? "localhost")", "-keyout", key, "-out", request,
            ])
        try Command.run(
            "/usr/bin/openssl",
            [
                "x509", "-req", "-in", request, "-CA", certificatePath, "-CAkey", keyPath, "-CAcreateserial",
                "-days", "1", "-extfile", extensions, "-out", certificate,
            ])
        return Certificate(certificatePath: certificate, keyPath: key)
    }

    deinit {
        directory.remove()
    }
}

import Foundation

/// Throwaway certificates for TLS tests, made with the `openssl` command
/// at test time in a fresh temporary directory (removed with this value's
/// last reference). Keys are EC P-256, unencrypted; nothing is committed.
///
/// - `caFile` signs `server`, `expiredServer`, `otherNameServer` and `client`.
/// - `otherCAFile` (trusted by nobody) signs `untrustedServer` and
///   `untrustedClient`.
/// - Server certificates carry SAN `DNS:localhost, IP:127.0.0.1`, except
///   `otherNameServer` (`DNS:other.example`). `expiredServer` expired a day ago.
public struct TestCertificates: Sendable {
    /// A certificate file and its key file.
    public struct Identity: Sendable, Hashable {
        public let certificateFile: String
        public let privateKeyFile: String
        /// The subject as OpenSSL prints it in RFC 2253 form, e.g. `CN=alice,O=Checklists Test`.
        public let subject: String
    }

    /// Holds the files; removed when the last copy of this value goes.
    public let directory: TemporaryDirectory
    /// The CA the tests trust.
    public let caFile: String
    /// A CA nobody trusts.
    public let otherCAFile: String
    public let server: Identity
    public let expiredServer: Identity
    public let otherNameServer: Identity
    public let untrustedServer: Identity
    /// A client certificate (`CN=alice`) from `caFile`'s CA.
    public let client: Identity
    /// A client certificate (`CN=mallory`) from the untrusted CA.
    public let untrustedClient: Identity

    /// Makes the whole set (a dozen `openssl` runs, well under a second each).
    ///
    /// - Throws: `ChildProcessError` if `openssl` is missing or fails (its
    ///   output is in the message).
    public static func make() throws -> TestCertificates {
        let directory = try TemporaryDirectory(prefix: "checklists-tls")
        let maker = CertificateMaker(directory: directory, openssl: try CertificateMaker.findOpenSSL())
        let ca = try maker.authority("ca", subject: "/O=Checklists Test/CN=Checklists Test CA")
        let other = try maker.authority("other-ca", subject: "/O=Elsewhere/CN=Untrusted Test CA")
        let serverNames = "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
        let clientUsage = "extendedKeyUsage=clientAuth\n"
        return TestCertificates(
            directory: directory, caFile: ca.certificateFile, otherCAFile: other.certificateFile,
            server: try maker.leaf("server", subject: "/O=Checklists Test/CN=localhost", issuer: ca, extensions: serverNames),
            expiredServer: try maker.leaf("expired", subject: "/O=Checklists Test/CN=localhost", issuer: ca,
                                          extensions: serverNames, days: -1),
            otherNameServer: try maker.leaf("other-name", subject: "/O=Checklists Test/CN=other.example", issuer: ca,
                                            extensions: "subjectAltName=DNS:other.example\nextendedKeyUsage=serverAuth\n"),
            untrustedServer: try maker.leaf("untrusted-server", subject: "/O=Elsewhere/CN=localhost", issuer: other,
                                            extensions: serverNames),
            client: try maker.leaf("client", subject: "/O=Checklists Test/CN=alice", issuer: ca, extensions: clientUsage),
            untrustedClient: try maker.leaf("untrusted-client", subject: "/O=Elsewhere/CN=mallory", issuer: other,
                                            extensions: clientUsage))
    }
}

/// Runs the `openssl` commands behind `TestCertificates`.
private struct CertificateMaker {
    let directory: TemporaryDirectory
    let openssl: String

    static func findOpenSSL() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(directory)/openssl") {
            return "\(directory)/openssl"
        }
        throw ChildProcessError("cannot find the openssl command on PATH (\(path)); TLS tests need it")
    }

    /// A self-signed CA certificate valid for two days.
    func authority(_ name: String, subject: String) throws -> TestCertificates.Identity {
        let identity = files(name, subject: subject)
        try run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-keyout", identity.privateKeyFile, "-out", identity.certificateFile, "-days", "2", "-subj", subject,
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        return identity
    }

    /// A key and a certificate for it signed by `issuer`, valid from now for
    /// `days` (negative: it expired that many days ago).
    func leaf(_ name: String, subject: String, issuer: TestCertificates.Identity, extensions: String,
              days: Int = 2) throws -> TestCertificates.Identity {
        let identity = files(name, subject: subject)
        let request = directory.appending("\(name).csr")
        let extensionFile = directory.appending("\(name).ext")
        try Data(extensions.utf8).write(to: URL(fileURLWithPath: extensionFile))
        try run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-keyout", identity.privateKeyFile, "-out", request, "-subj", subject])
        try run(["x509", "-req", "-in", request, "-CA", issuer.certificateFile, "-CAkey", issuer.privateKeyFile,
                 "-set_serial", String(UInt32.random(in: 1...UInt32.max)), "-days", String(days),
                 "-extfile", extensionFile, "-out", identity.certificateFile])
        return identity
    }

    private func files(_ name: String, subject: String) -> TestCertificates.Identity {
        // "/O=A/CN=b" -> "CN=b,O=A" (RFC 2253 lists the most specific part first).
        let rfc2253 = subject.split(separator: "/").reversed().joined(separator: ",")
        return TestCertificates.Identity(certificateFile: directory.appending("\(name).pem"),
                                         privateKeyFile: directory.appending("\(name).key"), subject: rfc2253)
    }

    private func run(_ arguments: [String]) throws {
        let result = try ProcessRunner.run(executable: openssl, arguments: arguments, timeout: .seconds(60))
        guard result.status == 0 else {
            throw ChildProcessError("openssl \(arguments.joined(separator: " ")) failed (status \(result.status)):\n\(result.stderr)")
        }
    }
}

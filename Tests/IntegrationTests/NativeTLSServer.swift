import ChecklistClient
import ChecklistSocket
import ChecklistTesting
import ChecklistTLS
import Foundation

/// A real `checklistd` whose `--port` speaks TLS (`--tls-cert`/`--tls-key`),
/// with certificates from `TestCertificates`. The certificate and key it is
/// started with are copies in a directory of their own, so that a test can
/// replace them and send SIGHUP.
final class NativeTLSServer: Sendable {
    let server: TestServer
    let certificates: TestCertificates
    let files: TemporaryDirectory
    var certificateFile: String { files.appending("server-cert.pem") }
    var keyFile: String { files.appending("server-key.pem") }

    private init(server: TestServer, certificates: TestCertificates, files: TemporaryDirectory) {
        self.server = server
        self.certificates = certificates
        self.files = files
    }

    /// Starts a server presenting `identity` (default: the `localhost` one)
    /// with the extra `arguments` (e.g. `--tls-client-ca`, `--plain-port 0`).
    static func start(_ identity: TestCertificates.Identity? = nil, _ arguments: [String] = []) throws -> NativeTLSServer {
        let certificates = try TestCertificates.shared()
        let files = try TemporaryDirectory(prefix: "checklistd-tls")
        let made = NativeTLSServer.Files(files)
        try made.install(identity ?? certificates.server)
        let server = try TestServer.start(["--tls-cert", made.certificateFile, "--tls-key", made.keyFile,
                                           "--tls-handshake-timeout", "1"] + arguments)
        return NativeTLSServer(server: server, certificates: certificates, files: files)
    }

    /// The certificate and key paths in a directory.
    struct Files {
        let certificateFile: String
        let keyFile: String

        init(_ directory: TemporaryDirectory) {
            certificateFile = directory.appending("server-cert.pem")
            keyFile = directory.appending("server-key.pem")
        }

        /// Copies `identity`'s certificate and key over the files.
        func install(_ identity: TestCertificates.Identity) throws {
            for (from, to) in [(identity.certificateFile, certificateFile), (identity.privateKeyFile, keyFile)] {
                try FileManager.default.contentsOfFile(from).write(to: URL(fileURLWithPath: to), options: .atomic)
            }
        }
    }

    /// Copies `identity` over the server's files (takes effect at the next SIGHUP).
    func install(_ identity: TestCertificates.Identity) throws {
        try Files(files).install(identity)
    }

    var port: UInt16 { server.port }
    var process: ServerProcess { server.process }

    /// The `--plain-port` port, from the `plaintext on HOST:PORT` line.
    var plainPort: UInt16? {
        guard let line = process.standardOutput.split(separator: "\n").first(where: { $0.contains("plaintext on ") }),
              let port = line.split(separator: ":").last else { return nil }
        return UInt16(port)
    }

    /// A client-library connection over TLS, trusting the test CA.
    func connect(_ tls: TLSClientConfiguration? = nil, host: String = "127.0.0.1", token: String? = nil,
                 name: String = "tls-server-test") async throws -> ChecklistConnection {
        try await ChecklistConnection.connect(host: host, port: port, clientName: name, token: token,
                                              timeout: .seconds(10), requestTimeout: .seconds(10),
                                              tls: tls ?? certificates.clientConfiguration())
    }

    func stop() {
        server.stop()
        files.remove()
    }
}

extension FileManager {
    /// The bytes of the file at `path`, or a thrown error naming it.
    func contentsOfFile(_ path: String) throws -> Data {
        guard let data = contents(atPath: path) else { throw ChildProcessError("cannot read \(path)") }
        return data
    }
}

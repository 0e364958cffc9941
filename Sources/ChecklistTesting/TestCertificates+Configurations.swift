import ChecklistTLS
import Foundation
import Synchronization

extension TestCertificates {
    private static let made = Mutex<Result<TestCertificates, any Error>?>(nil)

    /// One set for the whole test process, made on first use and removed
    /// when the process exits.
    public static func shared() throws -> TestCertificates {
        try made.withLock { made in
            if made == nil {
                made = Result { try TestCertificates.make() }
                atexit { TestCertificates.removeShared() }
            }
            return made!
        }.get()
    }

    private static func removeShared() {
        if case .success(let certificates)? = made.withLock({ $0 }) { certificates.directory.remove() }
    }

    /// A server presenting `identity` (default: `server`).
    public func serverConfiguration(_ identity: Identity? = nil, clientCA: String? = nil,
                                    versions: ClosedRange<TLSVersion> = .tls12 ... .tls13) -> TLSServerConfiguration {
        let identity = identity ?? server
        return TLSServerConfiguration(certificateFile: identity.certificateFile, privateKeyFile: identity.privateKeyFile,
                                      clientCAFile: clientCA, versions: versions)
    }

    /// A client trusting `caFile`, optionally presenting `identity`.
    public func clientConfiguration(_ identity: Identity? = nil, serverName: String? = nil,
                                    versions: ClosedRange<TLSVersion> = .tls12 ... .tls13) -> TLSClientConfiguration {
        TLSClientConfiguration(caFile: caFile, serverName: serverName, certificateFile: identity?.certificateFile,
                               privateKeyFile: identity?.privateKeyFile, versions: versions)
    }
}

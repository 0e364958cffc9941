/// A TLS protocol version this project speaks. Older versions are never
/// offered or accepted.
public enum TLSVersion: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
    case tls12 = 0x0303
    case tls13 = 0x0304

    public static func < (a: TLSVersion, b: TLSVersion) -> Bool { a.rawValue < b.rawValue }

    /// `TLSv1.2` or `TLSv1.3`, as OpenSSL names them.
    public var description: String { self == .tls12 ? "TLSv1.2" : "TLSv1.3" }
}

/// What a TLS server needs: its certificate and key, and optionally the CA
/// that client certificates must be signed by.
///
/// Fixed for every server context: TLS 1.2 and 1.3 only, forward-secret
/// AEAD ciphers for 1.2 (OpenSSL's defaults for 1.3), no renegotiation, no
/// compression, no session resumption (no tickets, no cache: every
/// connection does a full handshake, and no per-session state outlives it).
public struct TLSServerConfiguration: Sendable, Hashable {
    /// PEM file with the server's certificate, optionally followed by the
    /// intermediate certificates of its chain.
    public var certificateFile: String
    /// PEM file with the certificate's private key (unencrypted).
    public var privateKeyFile: String
    /// PEM file of CA certificates. When set, every client must present a
    /// certificate signed by one of them (mutual TLS).
    public var clientCAFile: String?
    /// The versions to accept (within 1.2...1.3).
    public var versions: ClosedRange<TLSVersion>

    public init(certificateFile: String, privateKeyFile: String, clientCAFile: String? = nil,
                versions: ClosedRange<TLSVersion> = .tls12 ... .tls13) {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.clientCAFile = clientCAFile
        self.versions = versions
    }
}

/// What a TLS client needs: whom to trust, which name to expect, and
/// optionally its own certificate for mutual TLS.
///
/// The server's certificate is always verified: it must chain to a trusted
/// CA, be valid now, and name the server (a DNS name, or an IP address SAN
/// when the name is a numeric address). There is no switch to turn this off.
public struct TLSClientConfiguration: Sendable, Hashable {
    /// PEM file of the CA certificates to trust. nil: the system's trust
    /// store (OpenSSL's default paths, /etc/ssl/certs on Debian).
    public var caFile: String?
    /// The name to send (SNI) and to verify the server's certificate
    /// against. nil: the host name or address the client connects to.
    public var serverName: String?
    /// PEM file with the client's certificate (and chain), for servers that
    /// require one. Needs `privateKeyFile`.
    public var certificateFile: String?
    /// PEM file with the client certificate's private key.
    public var privateKeyFile: String?
    /// The versions to offer (within 1.2...1.3).
    public var versions: ClosedRange<TLSVersion>

    public init(caFile: String? = nil, serverName: String? = nil, certificateFile: String? = nil,
                privateKeyFile: String? = nil, versions: ClosedRange<TLSVersion> = .tls12 ... .tls13) {
        self.caFile = caFile
        self.serverName = serverName
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.versions = versions
    }
}

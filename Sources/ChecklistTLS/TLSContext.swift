import COpenSSL

/// An OpenSSL `SSL_CTX`: the certificates, keys, trust and settings shared
/// by every session of one server (or one client configuration). Built once
/// from files; sessions are made from it with `TLSSession(server:)` or
/// `TLSSession(client:serverName:)`.
///
/// Sendable: the `SSL_CTX` is configured completely in `init` and never
/// changed afterwards; OpenSSL allows `SSL_new` on such a context from any
/// thread (it only touches the context's reference count, atomically). This
/// class owns the pointer and frees it in `deinit`; each session holds its
/// own OpenSSL reference, so a context can go away while sessions made from
/// it are still open (as after a reload).
public final class TLSContext: @unchecked Sendable {
    /// Whether sessions made from this context accept or initiate.
    public enum Role: Sendable, Hashable {
        case server, client
    }

    public let role: Role
    /// For a client context: the configured `serverName`, which replaces the
    /// host name a session is made for.
    let serverNameOverride: String?
    /// The `SSL_CTX *`. Only this class and `TLSSession.init` touch it.
    let handle: OpaquePointer

    /// Builds a server context: loads the certificate chain and key (and
    /// the client CA, which then makes client certificates required).
    ///
    /// - Throws: `TLSError` `.configuration` naming the file that failed and
    ///   OpenSSL's reason. Nothing is kept of a context that failed.
    public init(server configuration: TLSServerConfiguration) throws(TLSError) {
        role = .server
        serverNameOverride = nil
        handle = try Self.makeContext(TLS_server_method(), configuration.versions)
        // Thrown after every property is set, so deinit frees the handle.
        try configureServer(configuration)
    }

    /// Builds a client context: the CA file (or the system trust store) and
    /// the optional client certificate.
    ///
    /// - Throws: `TLSError` `.configuration` naming the file that failed.
    public init(client configuration: TLSClientConfiguration) throws(TLSError) {
        role = .client
        serverNameOverride = configuration.serverName
        handle = try Self.makeContext(TLS_client_method(), configuration.versions)
        // Thrown after every property is set, so deinit frees the handle.
        try configureClient(configuration)
    }

    deinit { SSL_CTX_free(handle) }

    /// A fresh context with the settings every context shares.
    private static func makeContext(_ method: OpaquePointer?, _ versions: ClosedRange<TLSVersion>) throws(TLSError) -> OpaquePointer {
        OpenSSLErrors.clear()
        guard let context = SSL_CTX_new(method) else {
            throw TLSError(.configuration, OpenSSLErrors.describe("cannot create a TLS context"))
        }
        let options = copenssl_OP_NO_COMPRESSION | copenssl_OP_NO_RENEGOTIATION | copenssl_OP_NO_TICKET
            | copenssl_OP_CIPHER_SERVER_PREFERENCE
        SSL_CTX_set_options(context, options)
        // Frees a session's 16 KiB read and write buffers while it is idle.
        _ = copenssl_CTX_set_mode(context, copenssl_MODE_RELEASE_BUFFERS)
        _ = copenssl_CTX_set_session_cache_mode(context, copenssl_SESS_CACHE_OFF)
        // TLS 1.3: no session tickets after the handshake.
        _ = SSL_CTX_set_num_tickets(context, 0)
        guard copenssl_CTX_set_min_proto_version(context, Int32(versions.lowerBound.rawValue)) == 1,
              copenssl_CTX_set_max_proto_version(context, Int32(versions.upperBound.rawValue)) == 1,
              // TLS 1.2: forward secrecy and AEAD only. TLS 1.3 keeps OpenSSL's suites.
              SSL_CTX_set_cipher_list(context, "ECDHE+AESGCM:ECDHE+CHACHA20:!aNULL") == 1
        else {
            SSL_CTX_free(context)
            throw TLSError(.configuration, OpenSSLErrors.describe("cannot set the TLS versions and ciphers"))
        }
        return context
    }

    private func configureServer(_ configuration: TLSServerConfiguration) throws(TLSError) {
        try loadIdentity(certificateFile: configuration.certificateFile, keyFile: configuration.privateKeyFile)
        guard let caFile = configuration.clientCAFile else { return }
        try loadTrust(caFile: caFile, what: "client CA")
        guard let names = SSL_load_client_CA_file(caFile) else {
            throw TLSError(.configuration, OpenSSLErrors.describe("cannot read the client CA names from \(caFile)"))
        }
        SSL_CTX_set_client_CA_list(handle, names)  // takes ownership of names
        SSL_CTX_set_verify(handle, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
    }

    private func configureClient(_ configuration: TLSClientConfiguration) throws(TLSError) {
        if let caFile = configuration.caFile {
            try loadTrust(caFile: caFile, what: "CA")
        } else {
            OpenSSLErrors.clear()
            guard SSL_CTX_set_default_verify_paths(handle) == 1 else {
                throw TLSError(.configuration, OpenSSLErrors.describe("cannot load the system's trust store"))
            }
        }
        SSL_CTX_set_verify(handle, SSL_VERIFY_PEER, nil)
        switch (configuration.certificateFile, configuration.privateKeyFile) {
        case (nil, nil):
            break
        case let (certificate?, key?):
            try loadIdentity(certificateFile: certificate, keyFile: key)
        case (_?, nil):
            throw TLSError(.configuration, "a client certificate needs its private key file too")
        case (nil, _?):
            throw TLSError(.configuration, "a private key file needs its client certificate file too")
        }
    }

    /// Loads a PEM certificate chain and its key, and checks they belong together.
    private func loadIdentity(certificateFile: String, keyFile: String) throws(TLSError) {
        OpenSSLErrors.clear()
        guard SSL_CTX_use_certificate_chain_file(handle, certificateFile) == 1 else {
            throw TLSError(.configuration, OpenSSLErrors.describe("cannot load the certificate chain from \(certificateFile)"))
        }
        guard SSL_CTX_use_PrivateKey_file(handle, keyFile, SSL_FILETYPE_PEM) == 1 else {
            throw TLSError(.configuration, OpenSSLErrors.describe("cannot load the private key from \(keyFile)"))
        }
        guard SSL_CTX_check_private_key(handle) == 1 else {
            throw TLSError(.configuration,
                           OpenSSLErrors.describe("the key in \(keyFile) does not belong to the certificate in \(certificateFile)"))
        }
    }

    /// Trusts the CA certificates of a PEM file.
    private func loadTrust(caFile: String, what: String) throws(TLSError) {
        OpenSSLErrors.clear()
        guard SSL_CTX_load_verify_locations(handle, caFile, nil) == 1 else {
            throw TLSError(.configuration, OpenSSLErrors.describe("cannot load the \(what) certificates from \(caFile)"))
        }
    }
}

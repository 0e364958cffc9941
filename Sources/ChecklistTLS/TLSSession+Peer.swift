import COpenSSL

extension TLSSession {
    /// The negotiated protocol version, once the handshake is complete.
    public var protocolVersion: TLSVersion? {
        guard isHandshakeComplete else { return nil }
        return TLSVersion(rawValue: Int(SSL_version(ssl)))
    }

    /// The subject of the peer's verified certificate in RFC 2253 form
    /// (most specific part first, e.g. `CN=alice,O=Example`), or nil when
    /// the peer sent none or it did not verify. On a server that requires
    /// client certificates, this is what names the client.
    public var peerCertificateSubject: String? {
        guard isHandshakeComplete, SSL_get_verify_result(ssl) == X509_V_OK,
              let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        guard let name = X509_get_subject_name(certificate), let text = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(text) }
        guard X509_NAME_print_ex(text, name, 0, copenssl_XN_FLAG_RFC2253) >= 0 else { return nil }
        let length = Int(BIO_ctrl_pending(text))
        var bytes = [UInt8](repeating: 0, count: length)
        let read = bytes.withUnsafeMutableBytes { BIO_read(text, $0.baseAddress, Int32(length)) }
        return String(decoding: bytes.prefix(max(0, Int(read))), as: UTF8.self)
    }
}

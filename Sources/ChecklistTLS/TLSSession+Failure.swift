import COpenSSL

extension TLSSession {
    /// OpenSSL reasons (`SSL_R_...`) meaning the peer refused our
    /// certificate, or wanted one we did not send.
    private static let certificateAlerts: Set<Int32> = [
        SSL_R_SSLV3_ALERT_BAD_CERTIFICATE, SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE,
        SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED, SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED,
        SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN, SSL_R_TLSV1_ALERT_UNKNOWN_CA,
        SSL_R_TLSV1_ALERT_ACCESS_DENIED, SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED,
    ].reduce(into: []) { $0.insert(Int32($1)) }

    /// OpenSSL reasons meaning the first bytes from the peer were no TLS
    /// record at all (e.g. a plaintext server's answer).
    private static let notTLSReasons: Set<Int32> = [
        SSL_R_WRONG_VERSION_NUMBER, SSL_R_PACKET_LENGTH_TOO_LONG, SSL_R_HTTP_REQUEST, SSL_R_HTTPS_PROXY_REQUEST,
        SSL_R_RECORD_LENGTH_MISMATCH, SSL_R_UNKNOWN_PROTOCOL,
    ].reduce(into: []) { $0.insert(Int32($1)) }

    /// On a client: whether the server sent a CertificateRequest (it then
    /// names the CAs it accepts; our servers always do).
    private var serverAskedForCertificate: Bool {
        guard let names = SSL_get_client_CA_list(ssl) else { return false }
        return OPENSSL_sk_num(names) > 0
    }

    /// Turns the failed call's state (`SSL_get_error`, the verification
    /// result, the error queue) into a `TLSError`, draining the queue.
    func describeFailure(after rc: Int32) -> TLSError {
        let kind = SSL_get_error(ssl, rc)
        let reason = ERR_GET_REASON(ERR_peek_last_error())
        let details = OpenSSLErrors.drain()
        let stage = isHandshakeComplete ? "the TLS connection" : "the TLS handshake"
        func message(_ what: String) -> String { details.isEmpty ? what : "\(what) (\(details))" }

        let verification = SSL_get_verify_result(ssl)
        if verification != X509_V_OK {
            let why = String(cString: X509_verify_cert_error_string(verification))
            let whose = role == .client ? "server's" : "client's"
            return TLSError(.certificateRejected, message("\(stage) failed: the \(whose) certificate was rejected: \(why)"),
                            verificationFailure: why)
        }
        if reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE {
            return TLSError(.certificateRejected, message("\(stage) failed: the client sent no certificate, and one is required"),
                            verificationFailure: "no certificate")
        }
        if role == .client && SSL_get_certificate(ssl) == nil && serverAskedForCertificate
            && (reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE || Self.certificateAlerts.contains(reason)) {
            return TLSError(.certificateRejected,
                            message("\(stage) failed: the server requires a client certificate, and none is configured"))
        }
        if Self.certificateAlerts.contains(reason) {
            return TLSError(.certificateRejected, message("\(stage) failed: the peer refused our certificate"))
        }
        if inputEnded && (kind == SSL_ERROR_SYSCALL || reason == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
            return TLSError(.truncated, "\(stage) ended early: the peer closed the stream without close_notify")
        }
        if !isHandshakeComplete && Self.notTLSReasons.contains(reason) {
            return TLSError(.notTLS, message("the TLS handshake failed: the peer does not speak TLS"))
        }
        if !isHandshakeComplete {
            return TLSError(.handshakeFailed, message("the TLS handshake failed"))
        }
        return TLSError(.protocolViolation, message("the TLS connection failed"))
    }
}

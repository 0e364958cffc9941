import COpenSSL

/// One key that may sign tokens: a public key (RSA, P-256, Ed25519) held
/// as an OpenSSL `EVP_PKEY`, or an HMAC secret. Made by `JSONWebKey`.
///
/// `@unchecked Sendable`: the `EVP_PKEY` is made in `init`, never changed
/// after and freed in `deinit`; OpenSSL 3 lets several threads use one
/// unchanging `EVP_PKEY` for verification at once (each verification has
/// its own `EVP_MD_CTX`). Nothing else holds the pointer.
public final class VerificationKey: @unchecked Sendable {
    public let algorithm: SigningAlgorithm
    private let publicKey: OpaquePointer?
    private let secret: [UInt8]

    /// Takes ownership of `publicKey` (freed in deinit).
    init(algorithm: SigningAlgorithm, publicKey: OpaquePointer) {
        self.algorithm = algorithm
        self.publicKey = publicKey
        self.secret = []
    }

    init(hmacSecret: [UInt8]) {
        algorithm = .hs256
        publicKey = nil
        secret = hmacSecret
    }

    deinit {
        if let publicKey { EVP_PKEY_free(publicKey) }
    }

    /// Whether `signature` signs `signed` (the token's `header.payload`
    /// bytes) under this key.
    public func verifies(_ signature: [UInt8], of signed: ArraySlice<UInt8>) -> Bool {
        switch algorithm {
        case .hs256: return hmacVerifies(signature, of: signed)
        case .rs256: return digestVerifies(signature, of: signed, digest: EVP_sha256())
        case .edDSA: return digestVerifies(signature, of: signed, digest: nil)
        case .es256:
            guard let der = Self.derSignature(fromConcatenated: signature, half: 32) else { return false }
            return digestVerifies(der, of: signed, digest: EVP_sha256())
        }
    }

    private func hmacVerifies(_ signature: [UInt8], of signed: ArraySlice<UInt8>) -> Bool {
        var mac = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let made = secret.withUnsafeBytes { key in
            signed.withUnsafeBytes { data in
                HMAC(EVP_sha256(), key.baseAddress, Int32(key.count), data.bindMemory(to: UInt8.self).baseAddress, data.count,
                     &mac, &length)
            }
        }
        guard made != nil, Int(length) == signature.count else { return false }
        return CRYPTO_memcmp(mac, signature, signature.count) == 0
    }

    private func digestVerifies(_ signature: [UInt8], of signed: ArraySlice<UInt8>, digest: OpaquePointer?) -> Bool {
        guard let publicKey, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, digest, nil, publicKey) == 1 else { return false }
        let result = signed.withUnsafeBytes { data in
            EVP_DigestVerify(context, signature, signature.count, data.bindMemory(to: UInt8.self).baseAddress, data.count)
        }
        ERR_clear_error()  // a failed verification leaves errors on this thread's queue
        return result == 1
    }

    /// JWS carries an ECDSA signature as `r || s` (RFC 7518 section 3.4);
    /// OpenSSL verifies the DER `ECDSA-Sig-Value`. Nil for a wrong length.
    static func derSignature(fromConcatenated signature: [UInt8], half: Int) -> [UInt8]? {
        guard signature.count == 2 * half, let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        let r = signature.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(half), nil) }
        let s = signature.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + half, Int32(half), nil) }
        guard let r, let s, ECDSA_SIG_set0(sig, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(sig, &out)
        guard length > 0, let out else { return nil }
        defer { copenssl_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }
}

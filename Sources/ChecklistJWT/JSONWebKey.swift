import COpenSSL
import ChecklistWire

/// One key of a JWK Set (RFC 7517 section 4, RFC 7518 section 6, RFC 8037
/// section 2): its members as strings, turned into a `VerificationKey`.
/// Private members (`d`, ...) are refused: the server needs only public
/// keys (and `oct` secrets), and a file holding private keys is a mistake.
struct JSONWebKey: Decodable {
    var kty: String
    var kid: String?
    var alg: String?
    var use: String?
    var crv: String?
    var n: String?
    var e: String?
    var x: String?
    var y: String?
    var k: String?
    var d: String?

    /// The smallest RSA modulus accepted, in bits.
    static let minRSABits = 2048
    /// The shortest HS256 secret, in bytes (RFC 7518 section 3.2: at least the hash's size).
    static let minHMACBytes = 32

    /// The key, or a `KeySetError` saying what is wrong with it.
    func verificationKey() throws(KeySetError) -> VerificationKey {
        guard d == nil else { throw KeySetError("key \(name): holds a private key (d); give only the public part") }
        if let use, use != "sig" { throw KeySetError("key \(name): use is \(use), not sig") }
        let key: VerificationKey
        switch kty {
        case "RSA": key = try rsaKey()
        case "EC": key = try ecKey()
        case "OKP": key = try okpKey()
        case "oct": key = VerificationKey(hmacSecret: try hmacSecret())
        default: throw KeySetError("key \(name): kty \(kty) is not RSA, EC, OKP or oct")
        }
        if let alg, alg != key.algorithm.rawValue {
            throw KeySetError("key \(name): alg \(alg) does not fit a \(kty) key (expected \(key.algorithm.rawValue))")
        }
        return key
    }

    /// A C string that lives as long as the program (OSSL_PARAM_BLD keeps key names unchanged).
    private static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    private var name: String { kid.map { "'\($0)'" } ?? "without kid" }

    private func member(_ value: String?, _ member: String) throws(KeySetError) -> [UInt8] {
        guard let value else { throw KeySetError("key \(name): no \(member)") }
        guard let bytes = Base64.decodeURL(value), !bytes.isEmpty else {
            throw KeySetError("key \(name): \(member) is not base64url")
        }
        return bytes
    }

    private func hmacSecret() throws(KeySetError) -> [UInt8] {
        let secret = try member(k, "k")
        guard secret.count >= Self.minHMACBytes else {
            throw KeySetError("key \(name): an HS256 secret needs at least \(Self.minHMACBytes) bytes, not \(secret.count)")
        }
        return secret
    }

    private func okpKey() throws(KeySetError) -> VerificationKey {
        guard crv == "Ed25519" else { throw KeySetError("key \(name): OKP curve \(crv ?? "(none)") is not Ed25519") }
        let x = try member(x, "x")
        guard x.count == 32, let pkey = EVP_PKEY_new_raw_public_key(copenssl_EVP_PKEY_ED25519, nil, x, x.count) else {
            throw KeySetError("key \(name): x is not a 32-byte Ed25519 public key")
        }
        return VerificationKey(algorithm: .edDSA, publicKey: pkey)
    }

    private func ecKey() throws(KeySetError) -> VerificationKey {
        guard crv == "P-256" else { throw KeySetError("key \(name): EC curve \(crv ?? "(none)") is not P-256") }
        let x = try member(x, "x"), y = try member(y, "y")
        guard x.count == 32, y.count == 32 else { throw KeySetError("key \(name): x and y must be 32 bytes each") }
        let point = [0x04] + x + y  // uncompressed point (SEC 1 section 2.3.3)
        // The builder keeps the pointers it is given until `build` turns it into
        // parameters: static strings, and the point pinned for the whole build.
        let pkey = point.withUnsafeBytes { pub in
            OpenSSLKeyBuilder.build(type: "EC") { builder in
                OSSL_PARAM_BLD_push_utf8_string(builder, Self.cString("group"), Self.cString("prime256v1"), 0) == 1
                    && OSSL_PARAM_BLD_push_octet_string(builder, Self.cString("pub"), pub.baseAddress, pub.count) == 1
            }
        }
        guard let pkey, OpenSSLKeyBuilder.publicKeyChecks(pkey) else {
            if let pkey { EVP_PKEY_free(pkey) }
            throw KeySetError("key \(name): x and y are not a point of P-256")
        }
        return VerificationKey(algorithm: .es256, publicKey: pkey)
    }

    private func rsaKey() throws(KeySetError) -> VerificationKey {
        let modulus = try member(n, "n"), exponent = try member(e, "e")
        var bignums: [OpaquePointer] = []
        defer { bignums.forEach { BN_free($0) } }
        for bytes in [modulus, exponent] {
            guard let bignum = BN_bin2bn(bytes, Int32(bytes.count), nil) else { throw KeySetError("key \(name): out of memory") }
            bignums.append(bignum)
        }
        let bits = Int(BN_num_bits(bignums[0]))
        guard bits >= Self.minRSABits else {
            throw KeySetError("key \(name): an RSA modulus of \(bits) bits is under \(Self.minRSABits)")
        }
        let pkey = OpenSSLKeyBuilder.build(type: "RSA") { builder in
            OSSL_PARAM_BLD_push_BN(builder, Self.cString("n"), bignums[0]) == 1
                && OSSL_PARAM_BLD_push_BN(builder, Self.cString("e"), bignums[1]) == 1
        }
        guard let pkey else { throw KeySetError("key \(name): n and e are not an RSA public key") }
        return VerificationKey(algorithm: .rs256, publicKey: pkey)
    }
}

/// Builds an `EVP_PKEY` from OSSL_PARAMs (OpenSSL 3's `EVP_PKEY_fromdata`).
enum OpenSSLKeyBuilder {
    /// A public key of `type` ("RSA", "EC") with the parameters `push` adds; nil on any failure.
    static func build(type: String, _ push: (OpaquePointer) -> Bool) -> OpaquePointer? {
        guard let builder = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard push(builder), let params = OSSL_PARAM_BLD_to_param(builder) else { return nil }
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
              EVP_PKEY_fromdata(context, &pkey, copenssl_EVP_PKEY_PUBLIC_KEY, params) == 1 else {
            ERR_clear_error()
            return nil
        }
        return pkey
    }

    /// Whether `pkey`'s public part is valid (for EC: the point is on the curve).
    static func publicKeyChecks(_ pkey: OpaquePointer) -> Bool {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        let valid = EVP_PKEY_public_check(context) == 1
        ERR_clear_error()
        return valid
    }
}

import COpenSSL

/// `Sec-WebSocket-Accept` (RFC 6455 section 4.2.2): base64 of the SHA-1 of
/// the client's key followed by the RFC's GUID, both from OpenSSL.
public enum WebSocketAcceptKey {
    /// The GUID of RFC 6455 section 1.3.
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The accept value for `key` (the client's `Sec-WebSocket-Key`, as sent).
    public static func accept(for key: String) -> String {
        let input = Array((key + guid).utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = EVP_Digest(input, input.count, &digest, &length, EVP_sha1(), nil)
        precondition(ok == 1 && length == 20, "OpenSSL SHA-1 failed")
        return base64(Array(digest[..<20]))
    }

    /// Standard base64 with padding (OpenSSL's `EVP_EncodeBlock`).
    public static func base64(_ bytes: [UInt8]) -> String {
        var out = [UInt8](repeating: 0, count: (bytes.count + 2) / 3 * 4 + 1)
        let written = EVP_EncodeBlock(&out, bytes, Int32(bytes.count))
        return String(decoding: out[..<Int(written)], as: UTF8.self)
    }

    /// The bytes of a padded base64 string, or nil when it is not one
    /// (OpenSSL's `EVP_DecodeBlock`, which counts padding as zero bytes).
    public static func decodeBase64(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0, !chars.isEmpty else { return chars.isEmpty ? [] : nil }
        var out = [UInt8](repeating: 0, count: chars.count / 4 * 3)
        let written = EVP_DecodeBlock(&out, chars, Int32(chars.count))
        guard written >= 0 else { return nil }
        let padding = chars.reversed().prefix(2).prefix { $0 == UInt8(ascii: "=") }.count
        return Array(out[..<(Int(written) - padding)])
    }
}

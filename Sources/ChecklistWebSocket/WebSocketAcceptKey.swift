import COpenSSL
import ChecklistWire

/// `Sec-WebSocket-Accept` (RFC 6455 section 4.2.2): base64 of the SHA-1 of
/// the client's key followed by the RFC's GUID (SHA-1 from OpenSSL).
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
        return Base64.encode(Array(digest[..<20]))
    }
}

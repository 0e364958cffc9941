/// Base64url without padding (RFC 4648 section 5, as RFC 7515 section 2
/// uses it): the alphabet with `-` and `_`, no `=`. Only decoding: the
/// server reads tokens and keys, it never writes them. Strict: a byte
/// outside the alphabet, padding, a length of 1 modulo 4 or non-zero
/// trailing bits are refused, so every value has exactly one encoding.
public enum Base64URL {
    /// The value of each alphabet byte (255: not in the alphabet).
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 255, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    /// The bytes `text` encodes, or nil if it is not canonical base64url.
    public static func decode<Text: Collection>(_ text: Text) -> [UInt8]? where Text.Element == UInt8 {
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in text {
            let value = values[Int(byte)]
            guard value != 255 else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // The bits left over must be zero (RFC 4648 section 3.5).
        guard accumulator == 0 else { return nil }
        return out
    }

    /// The bytes of the base64url string `text`, or nil.
    public static func decode(_ text: String) -> [UInt8]? { decode(Array(text.utf8)) }
}

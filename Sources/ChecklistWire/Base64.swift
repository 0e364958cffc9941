/// Base64 (RFC 4648): the standard alphabet with `=` padding (section 4)
/// for binary carried in text (the changes in a commit notice's payload,
/// which PostgreSQL takes as text; the web assets built into the server;
/// WebSocket keys), and base64url without padding (section 5) for signed
/// tokens and keys (RFC 7515 section 2). Pure: no I/O.
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The value of each alphabet byte (255: not in the alphabet).
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 255, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    /// The value of each base64url alphabet byte (`-` and `_` for `+` and `/`; 255: not in it).
    private static let urlValues: [UInt8] = {
        var table = values
        table[Int(UInt8(ascii: "+"))] = 255
        table[Int(UInt8(ascii: "/"))] = 255
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()

    /// The length of the encoding of `count` bytes.
    package static func encodedCount(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    package static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(encodedCount(bytes.count))
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int(n >> UInt32(shift) & 63)]) }
            i += 3
        }
        let left = bytes.count - i
        if left > 0 {
            let n = UInt32(bytes[i]) << 16 | (left == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(left == 2 ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes the UTF-8 `chars` encode; nil when they are not padded base64.
    package static func decode(_ chars: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard chars.count % 4 == 0 else { return nil }
        var padding = 0
        if chars.count > 0, chars[chars.count - 1] == UInt8(ascii: "=") { padding += 1 }
        if chars.count > 1, chars[chars.count - 2] == UInt8(ascii: "=") { padding += 1 }
        var out = [UInt8](repeating: 0, count: chars.count / 4 * 3 - padding)
        var o = 0
        var i = 0
        while i < chars.count {
            let last = i + 4 == chars.count
            var n: UInt32 = 0
            for j in 0..<4 {
                let char = chars[i + j]
                let value: UInt8 = last && j >= 4 - padding ? 0 : values[Int(char)]
                guard value != 255 else { return nil }
                n = n << 6 | UInt32(value)
            }
            let take = last ? 3 - padding : 3
            if take > 0 { out[o] = UInt8(n >> 16 & 255) }
            if take > 1 { out[o + 1] = UInt8(n >> 8 & 255) }
            if take > 2 { out[o + 2] = UInt8(n & 255) }
            o += take
            i += 4
        }
        return out
    }

    /// The bytes of the padded base64 string `text`, or nil.
    package static func decode(_ text: String) -> [UInt8]? {
        Array(text.utf8).withUnsafeBufferPointer { decode($0) }
    }

    /// The bytes base64url `text` encodes (no padding), or nil unless it is
    /// canonical: a byte outside the alphabet, padding, a length of 1
    /// modulo 4 or non-zero trailing bits are refused, so every value has
    /// exactly one encoding.
    package static func decodeURL<Text: Collection>(_ text: Text) -> [UInt8]? where Text.Element == UInt8 {
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in text {
            let value = urlValues[Int(byte)]
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
    package static func decodeURL(_ text: String) -> [UInt8]? { decodeURL(Array(text.utf8)) }
}

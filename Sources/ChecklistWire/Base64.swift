/// Base64 with the standard alphabet and `=` padding (RFC 4648 section 4),
/// for binary carried in text: the changes in a commit notice's payload,
/// which PostgreSQL takes as text, and the web assets built into the
/// server. Pure: no I/O.
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The value of each alphabet byte (255: not in the alphabet).
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 255, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
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
}

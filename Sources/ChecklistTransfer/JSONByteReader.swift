/// JSON text read through a positional read function (`pread`), a buffer of
/// 64 KiB at a time: the lexical layer of the streaming JSON import. Holds
/// at most one buffer and one string, whatever the file's size, and can go
/// back to an offset seen before (the import reads a file twice).
final class JSONByteReader {
    typealias ReadAt = (_ offset: UInt64, _ into: UnsafeMutableRawBufferPointer) throws -> Int

    /// Longest string accepted, in UTF-8 bytes (texts are far shorter).
    static let maxStringBytes = 1 << 20
    /// Deepest nesting of a value that is skipped.
    static let maxSkipDepth = 256

    private let readAt: ReadAt
    private var buffer: [UInt8] = []
    private var bufferStart: UInt64 = 0
    private var index = 0

    init(readAt: @escaping ReadAt) {
        self.readAt = readAt
    }

    /// The offset of the next byte.
    var offset: UInt64 { bufferStart + UInt64(index) }

    func seek(to offset: UInt64) {
        if offset >= bufferStart && offset <= bufferStart + UInt64(buffer.count) {
            index = Int(offset - bufferStart)
        } else {
            bufferStart = offset
            buffer.removeAll(keepingCapacity: true)
            index = 0
        }
    }

    /// The next byte without taking it; nil at the end.
    func peek() throws -> UInt8? {
        if index == buffer.count {
            bufferStart += UInt64(buffer.count)
            index = 0
            buffer = [UInt8](repeating: 0, count: 1 << 16)
            let n = try buffer.withUnsafeMutableBytes { try readAt(bufferStart, $0) }
            buffer.removeLast(buffer.count - max(0, n))
            if n <= 0 { return nil }
        }
        return buffer[index]
    }

    func take() throws -> UInt8? {
        guard let b = try peek() else { return nil }
        index += 1
        return b
    }

    /// The next byte after white space, not taken.
    func peekToken() throws -> UInt8? {
        while let b = try peek(), b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { index += 1 }
        return try peek()
    }

    func error(_ what: String) -> TransferError {
        TransferError("JSON: \(what) (at byte \(offset))")
    }

    /// Takes `byte` after white space, or throws naming `what` was expected.
    func expect(_ byte: UInt8, _ what: String) throws {
        guard try peekToken() == byte else { throw error("expected \(what)") }
        index += 1
    }

    /// After white space: `,` (true), or `close` (false) ends the container.
    func separator(close: UInt8) throws -> Bool {
        switch try take(afterSpace: ()) {
        case UInt8(ascii: ","): return true
        case close: return false
        default: throw error("expected ',' or '\(Character(Unicode.Scalar(close)))'")
        }
    }

    private func take(afterSpace: Void) throws -> UInt8? {
        _ = try peekToken()
        return try take()
    }

    /// A string literal, after white space.
    func string() throws -> String {
        try expect(UInt8(ascii: "\""), "a string")
        var bytes: [UInt8] = []
        while true {
            guard let b = try take() else { throw error("the file ends inside a string") }
            guard bytes.count <= Self.maxStringBytes else { throw error("a string longer than \(Self.maxStringBytes) bytes") }
            switch b {
            case UInt8(ascii: "\""):
                guard let s = String(validating: bytes, as: UTF8.self) else { throw error("a string that is not valid UTF-8") }
                return s
            case UInt8(ascii: "\\"):
                guard let e = try take() else { throw error("the file ends inside a string") }
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(e)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard try take() == UInt8(ascii: "\\"), try take() == UInt8(ascii: "u") else { throw error("a lone surrogate \\u escape") }
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate \\u escape") }
                        scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw error("a lone surrogate \\u escape") }
                    bytes += Array(String(Character(u)).utf8)
                default: throw error("an unknown escape \\\(Character(Unicode.Scalar(e)))")
                }
            case 0..<0x20: throw error("a control character inside a string")
            default: bytes.append(b)
            }
        }
    }

    private func hex4() throws -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let b = try take(), let d = Character(Unicode.Scalar(b)).hexDigitValue else { throw error("a bad \\u escape") }
            v = v << 4 | UInt32(d)
        }
        return v
    }

    /// A number literal's text, after white space (checked against JSON's grammar).
    func number() throws -> String {
        _ = try peekToken()
        var text: [UInt8] = []
        while let b = try peek(), b == UInt8(ascii: "-") || b == UInt8(ascii: "+") || b == UInt8(ascii: ".")
            || b == UInt8(ascii: "e") || b == UInt8(ascii: "E") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) {
            guard text.count < 64 else { throw error("a number longer than 64 characters") }
            text.append(b)
            index += 1
        }
        let s = String(decoding: text, as: UTF8.self)
        guard Self.isNumber(s) else { throw error("expected a value") }
        return s
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    static func isNumber(_ s: String) -> Bool {
        var c = Substring(s)
        if c.first == "-" { c.removeFirst() }
        func digits() -> Int { let n = c.prefix { $0.isASCII && $0.isNumber }.count; c.removeFirst(n); return n }
        let lead = c.first
        let n = digits()
        guard n >= 1, lead != "0" || n == 1 else { return false }
        if c.first == "." { c.removeFirst(); guard digits() >= 1 else { return false } }
        if c.first == "e" || c.first == "E" {
            c.removeFirst()
            if c.first == "+" || c.first == "-" { c.removeFirst() }
            guard digits() >= 1 else { return false }
        }
        return c.isEmpty
    }

    /// `true`, `false` or `null` after white space; nil if it is none of them.
    func literal() throws -> Bool?? {
        switch try peekToken() {
        case UInt8(ascii: "t"): try word("true"); return .some(true)
        case UInt8(ascii: "f"): try word("false"); return .some(false)
        case UInt8(ascii: "n"): try word("null"); return .some(nil)
        default: return nil
        }
    }

    private func word(_ w: String) throws {
        for expected in w.utf8 { guard try take() == expected else { throw error("expected \(w)") } }
    }

    /// Skips one value of any kind.
    func skipValue(depth: Int = 0) throws {
        guard depth < Self.maxSkipDepth else { throw error("nested deeper than \(Self.maxSkipDepth) levels") }
        switch try peekToken() {
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "{"):
            index += 1
            if try peekToken() == UInt8(ascii: "}") { index += 1; return }
            repeat {
                _ = try string()
                try expect(UInt8(ascii: ":"), "':'")
                try skipValue(depth: depth + 1)
            } while try separator(close: UInt8(ascii: "}"))
        case UInt8(ascii: "["):
            index += 1
            if try peekToken() == UInt8(ascii: "]") { index += 1; return }
            repeat { try skipValue(depth: depth + 1) } while try separator(close: UInt8(ascii: "]"))
        case nil: throw error("the file ends where a value belongs")
        default:
            if try literal() == nil { _ = try number() }
        }
    }
}

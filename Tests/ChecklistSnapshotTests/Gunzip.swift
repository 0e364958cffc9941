@testable import ChecklistSnapshot

/// Inflates every member of `bytes` with zlib, as a snapshot's reader does
/// (the tests' one way to read a gzip stream back whole).
func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
    let inflater = try GzipInflater()
    var out: [UInt8] = []
    var offset = 0
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    defer { buffer.deallocate() }
    while true {
        switch try inflater.inflate(into: buffer, fail: { code, message in SnapshotError(code, message) }) {
        case .produced(let n): out += UnsafeRawBufferPointer(rebasing: buffer[0..<n])
        case .needInput:
            let taken = bytes.withUnsafeBytes { inflater.feed(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            offset += taken
            if offset == bytes.count && taken == 0 { inflater.endInput() }
        case .end: return out
        }
    }
}

/// Gzip (RFC 1952) of a whole buffer at once, for inputs made to order:
/// the conformance cases' snapshot files and the fuzzer's gzipped inputs.
/// Snapshots themselves stream through `GzipDeflater` block by block.
public enum Gzip {
    /// `input` as one gzip member; `level` 0 (store) ... 9 (smallest).
    public static func compress(_ input: UnsafeRawBufferPointer, level: Int32 = 6) throws(SnapshotError) -> [UInt8] {
        let deflater = try GzipDeflater(level: level)
        var out: [UInt8] = []
        try deflater.compress(input, finish: true) { out.append(contentsOf: $0) }
        return out
    }
}

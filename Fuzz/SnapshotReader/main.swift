import ChecklistModel
import ChecklistSnapshot
#if canImport(Glibc)
import Glibc
#endif

// libFuzzer target: the snapshot reader (ChecklistSnapshot), fed the way
// IMPORT and recovery feed it: in chunks, through its input closure.
//
// The first input byte picks a mode and the chunk size:
//   even: the rest is the snapshot file as is (gzip stream and all), which
//         mostly exercises the inflater and its bounds;
//   odd:  the rest is the *uncompressed* snapshot content, which this
//         harness gzips first, so mutations reach the record decoder
//         instead of dying at the gzip checksum.
// Small limits keep each run cheap; a snapshot must fail with a
// SnapshotError or read to its verified trailer, never trap, hang or
// grow without bound.

/// With SNAPSHOT_FUZZ_WRITE_SEEDS=DIR, writes the seed corpus and exits.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    guard let directory = getenv("SNAPSHOT_FUZZ_WRITE_SEEDS") else { return 0 }
    do {
        try writeSeeds(to: String(cString: directory))
        exit(0)
    } catch {
        fputs("cannot write the snapshot seeds: \(error)\n", stderr)
        exit(1)
    }
}

let limits = SnapshotLimits(maxRecordBytes: 64 * 1024, maxRawBytes: 16 << 20, maxRatio: 1000, ratioGraceBytes: 1 << 20)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSnapshot(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let mode = data[0]
    let payload = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    let file: [UInt8] = mode & 1 == 0 ? Array(payload) : (try? Gzip.compress(payload, level: 1)) ?? []
    let chunk = [1, 7, 512, 65536][Int(mode >> 1) % 4]
    var offset = 0
    do {
        let reader = try SnapshotReader(name: "fuzz", limits: limits) { (buffer) throws(SnapshotError) -> Int in
            let n = min(buffer.count, chunk, file.count - offset)
            guard n > 0 else { return 0 }
            file.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + n])) }
            offset += n
            return n
        }
        var records = 0
        while let _ = try reader.next() {
            records += 1
            precondition(records <= 16 << 20, "more records than bytes")
        }
        precondition(reader.trailer != nil, "next() returned nil without a trailer")
    } catch {
        // Refusing a bad snapshot is the expected outcome.
    }
    return 0
}

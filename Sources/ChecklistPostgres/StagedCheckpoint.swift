import ChecklistSnapshot
import Glibc

/// A checkpoint's compressed parts copied into an unlinked file in
/// `/dev/shm` (memory, never a disk), so that `SnapshotReader(path:)` can
/// inflate its gzip members on several threads (`ParallelGzipInflater`)
/// while the loading thread decodes and builds the list. The file has no
/// name once made: it goes when the reader and this object are gone.
///
/// `make` returns nil where that is not possible (no `/dev/shm`, a failed
/// write): the caller then streams the parts as one gzip stream.
final class StagedCheckpoint {
    /// Compressed bytes from which a load stages its checkpoint (smaller ones
    /// stream: a thread pool is not worth it for a few blocks).
    static let minimumBytes = 2 << 20

    private let fd: Int32
    /// The staged bytes.
    let count: Int
    /// Where `SnapshotReader(path:)` opens it.
    var path: String { "/proc/self/fd/\(fd)" }

    private init(fd: Int32, count: Int) {
        self.fd = fd
        self.count = count
    }

    deinit { close(fd) }

    /// Copies column `column` of every row of `parts`, in row order.
    static func make(_ parts: PostgresResult, column: Int) -> StagedCheckpoint? {
        let name = "/dev/shm/checklistd-checkpoint-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        unlink(name)
        var total = 0
        for row in 0..<parts.rowCount {
            let written = parts.withBytes(row, column) { bytes in writeAll(fd, bytes) }
            guard written else {
                close(fd)
                return nil
            }
            total += parts.withBytes(row, column) { $0.count }
        }
        return StagedCheckpoint(fd: fd, count: total)
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }
}

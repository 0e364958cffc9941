import ChecklistSnapshot
import Glibc
import Synchronization

/// A server's data directory: the `LOCK` file, snapshots
/// `snapshot-<start LSN>.ckss.gz` and log segments `wal-<first LSN>.log`
/// (Protocol/SNAPSHOT.md section 5).
///
/// Opening it takes an exclusive `flock` on `LOCK`, held until `close()` or
/// deinit, so that two servers (or a server and an offline tool) never use
/// the same directory.
public final class DataDirectory: Sendable {
    /// A snapshot file in the directory.
    public struct SnapshotFile: Hashable, Sendable {
        public var path: String
        /// The LSN in its name: the log continues after it.
        public var startLSN: LSN
    }

    /// The directory's path, as given.
    public let path: String
    /// The descriptor holding the flock; -1 once closed.
    private let lockFD: Mutex<Int32>

    /// Creates the directory (and parents) if missing and locks it. Throws
    /// `LOCKED` naming the holder's pid when another process has it.
    public init(path: String) throws(PersistenceError) {
        self.path = path
        try DirectoryFiles.makeDirectories(path)
        let lockPath = path + "/LOCK"
        let fd = try DirectoryFiles.open(lockPath, O_RDWR | O_CREAT)
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            var holder = [UInt8](repeating: 0, count: 32)
            let n = holder.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            Glibc.close(fd)
            guard code == EWOULDBLOCK else { throw DirectoryFiles.error("flock", lockPath, code) }
            let pid = n > 0 ? String(decoding: holder[0..<n], as: UTF8.self).split(separator: "\n").first.map(String.init) ?? "?" : "?"
            throw PersistenceError(.locked, "data directory \(path) is in use by another process (pid \(pid)); stop it first", file: lockPath)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        lockFD = Mutex(fd)
    }

    deinit { close() }

    /// Releases the lock. Idempotent.
    public func close() {
        lockFD.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }

    /// The path of the snapshot starting at `startLSN`.
    public func snapshotPath(startLSN: LSN) -> String {
        path + "/snapshot-" + hex16(startLSN) + ".ckss.gz"
    }

    /// The snapshots in the directory, oldest (lowest start LSN) first.
    public func snapshots() throws(PersistenceError) -> [SnapshotFile] {
        try DirectoryFiles.listDirectory(path).compactMap { name in
            parseHexName(name, prefix: "snapshot-", suffix: ".ckss.gz").map { SnapshotFile(path: path + "/" + name, startLSN: $0) }
        }.sorted { $0.startLSN < $1.startLSN }
    }

    /// Writes a snapshot durably: to a temporary file, fsynced, renamed to
    /// `snapshot-<header.startLSN>.ckss.gz`, then the directory fsynced.
    /// `header.startLSN` must be the log's last LSN (`WriteAheadLog.lastLSN`,
    /// read under the store's lock) when the capture began, or, offline,
    /// `RecoveryReport.nextLSN - 1`: recovery replays only what follows it.
    /// `body` writes the lists and items; `endLSN` is read after it. When
    /// `log` is given, the snapshot is published only once the log is
    /// durable up to `endLSN`, so recovery never sees a snapshot holding
    /// changes the log lost. A failure leaves no snapshot behind; the
    /// writer's `SnapshotError`s come out as `PersistenceError(.snapshot)`,
    /// `body`'s other errors as they are.
    @discardableResult
    public func writeSnapshot(header: SnapshotHeader, options: SnapshotWriter.Options = .init(),
                              log: WriteAheadLog? = nil, endLSN: () -> LSN,
                              body: (SnapshotWriter) throws -> Void) throws -> (file: SnapshotFile, summary: SnapshotWriter.Summary) {
        let final = snapshotPath(startLSN: header.startLSN)
        let temporary = final + ".tmp"
        do {
            let (summary, end) = try PersistenceError.wrappingSnapshotErrors {
                let writer = try SnapshotWriter(path: temporary, header: header, options: options)
                try body(writer)
                let end = endLSN()
                return (try writer.finish(endLSN: end), end)
            }
            try log?.waitDurable(end)
            try DirectoryFiles.rename(temporary, final)
            try DirectoryFiles.fsyncDirectory(path)
            return (SnapshotFile(path: final, startLSN: header.startLSN), summary)
        } catch {
            try? DirectoryFiles.unlink(temporary)
            throw error
        }
    }

    /// After a snapshot is durable: keeps the newest `keepSnapshots`
    /// snapshots, deletes older ones, and removes the log segments that only
    /// hold records the oldest kept snapshot contains (through `log` when one
    /// is open, so it forgets them too; directly when offline). Keeping two snapshots
    /// (the default) leaves a fallback if the newest is ever damaged: move it
    /// aside and the previous one plus the log still recover everything.
    /// Returns how many snapshots and segments were removed.
    @discardableResult
    public func prune(keepSnapshots: Int = 2, log: WriteAheadLog?) throws(PersistenceError) -> (snapshots: Int, segments: Int) {
        precondition(keepSnapshots >= 1)
        let all = try snapshots()
        guard let oldestKept = all.suffix(keepSnapshots).first else { return (0, 0) }
        let doomed = all.dropLast(keepSnapshots)
        for file in doomed { try DirectoryFiles.unlink(file.path) }
        if !doomed.isEmpty { try DirectoryFiles.fsyncDirectory(path) }
        let segments: Int
        if let log {
            segments = try log.removeSegments(before: oldestKept.startLSN + 1)
        } else {
            segments = try LogSegments.remove(in: path, from: LogSegments.list(in: path), before: oldestKept.startLSN + 1).count
        }
        return (doomed.count, segments)
    }

    /// Deletes temporary files left by a crash during a snapshot write.
    func removeTemporaryFiles() throws(PersistenceError) {
        for name in try DirectoryFiles.listDirectory(path) where name.hasPrefix("snapshot-") && name.hasSuffix(".tmp") {
            try DirectoryFiles.unlink(path + "/" + name)
        }
    }
}
